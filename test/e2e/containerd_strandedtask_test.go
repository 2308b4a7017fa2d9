package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// TestContainerdStrandedTask: a container containerd's CRI reports EXITED
// while containerd still holds a task for it (what a StartContainer cut by
// a kill -9 inside containerd's task creation leaves: see
// cri.Client.EndStrandedTask) cannot be removed through the CRI, neither
// it nor its sandbox, stopped or not; EndStrandedTask ends the task, and
// then both go. The state is made here without a kill: a task is created
// for the container behind the CRI's back (ctr), so that the CRI's
// StartContainer finds one, fails, and records the container as EXITED
// (StartError) with the task left alive, as in the cut start.
func TestContainerdStrandedTask(t *testing.T) {
	e := needContainerd(t)
	ctr := os.Getenv("ACTORLET_CTR")
	if ctr == "" {
		t.Fatal("ACTORLET_CTR is not set: `test/e2e/env.sh up` writes it into the env file")
	}
	ctx := context.Background()
	c := e.client
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "stranded", Namespace: "e2e", Uid: fmt.Sprintf("stranded-%d", time.Now().UnixNano())},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}},
	}
	sb, err := c.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: e.workload},
		Args:     []string{"-msg", "stranded"},
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.EndStrandedTask(ctx, id)
		_ = c.RemovePodSandbox(ctx, sb)
	})
	address := strings.TrimPrefix(e.endpoint, "unix://")
	tasks := func() string {
		out, err := exec.Command(ctr, "--address", address, "--namespace", "k8s.io", "tasks", "ls").CombinedOutput()
		if err != nil {
			t.Fatalf("ctr tasks ls: %v\n%s", err, out)
		}
		return string(out)
	}
	if out, err := exec.Command(ctr, "--address", address, "--namespace", "k8s.io", "tasks", "start", "--detach", "--null-io", id).CombinedOutput(); err != nil {
		t.Fatalf("ctr tasks start %s: %v\n%s", id, err, out)
	}
	if err := c.StartContainer(ctx, id); err == nil {
		t.Fatal("StartContainer of a container that has a task succeeded")
	}
	st, err := c.ContainerStatus(ctx, id)
	if err != nil || st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("container after the failed start: %v %v, want EXITED", st.GetState(), err)
	}
	t.Logf("the CRI reports the container %v (%s, exit %d, %q) while its task lives", st.GetState(), st.GetReason(), st.GetExitCode(), st.GetMessage())

	// What the CRI alone can do: nothing removes it.
	if err := c.RemoveContainer(ctx, id); cri.KindOf(err) != cri.FailedPrecondition {
		t.Fatalf("RemoveContainer: %v, want FailedPrecondition (containerd refuses a container with a task)", err)
	}
	if err := c.StopContainer(ctx, id, 0); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	if err := c.RemoveContainer(ctx, id); cri.KindOf(err) != cri.FailedPrecondition {
		t.Fatalf("RemoveContainer after StopContainer: %v, want FailedPrecondition (StopContainer ignores an EXITED container)", err)
	}
	if err := c.StopPodSandbox(ctx, sb); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
	if err := c.RemovePodSandbox(ctx, sb); cri.KindOf(err) != cri.FailedPrecondition {
		t.Fatalf("RemovePodSandbox: %v, want FailedPrecondition (it removes the container first)", err)
	}
	if !strings.Contains(tasks(), id) {
		t.Fatalf("the task of %s is gone before EndStrandedTask", id)
	}

	if err := c.EndStrandedTask(ctx, id); err != nil {
		t.Fatalf("EndStrandedTask: %v", err)
	}
	if out := tasks(); strings.Contains(out, id) {
		t.Fatalf("the task of %s is still there:\n%s", id, out)
	}
	if err := c.EndStrandedTask(ctx, id); err != nil {
		t.Fatalf("EndStrandedTask without a task: %v, want success", err)
	}
	if err := c.RemoveContainer(ctx, id); err != nil {
		t.Fatalf("RemoveContainer after EndStrandedTask: %v", err)
	}
	if err := c.RemovePodSandbox(ctx, sb); err != nil {
		t.Fatalf("RemovePodSandbox after EndStrandedTask: %v", err)
	}
	if _, err := c.PodSandboxStatus(ctx, sb); cri.KindOf(err) != cri.NotFound {
		t.Fatalf("the sandbox is still there: %v", err)
	}
}
