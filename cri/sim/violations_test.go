package sim

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestStartTwiceIsRefusedAndRecorded: a container never starts twice, and
// each misuse shows in Status(verbose).
func TestStartTwiceIsRefusedAndRecorded(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "uid-p", 0)
	sb := runPod(t, ctx, rt, cfg)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("app", "busybox"))

	if in := simInfo(t, ctx, clientStatus(c)); in.ViolationCount != 0 || in.Violations == nil {
		t.Fatalf("violations before misuse = %+v (want an empty, non-null list)", in)
	}
	_, err := c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	noErr(t, err, "first StartContainer")
	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.FailedPrecondition, "second StartContainer")
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("state after refused start = %v", st.State)
	}
	_, err = rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	if !errors.Is(err, ErrFailedPrecondition) {
		t.Fatalf("direct second StartContainer: %v, want ErrFailedPrecondition", err)
	}

	// Starting an exited container is the same misuse.
	_, err = c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 1})
	noErr(t, err, "StopContainer")
	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.FailedPrecondition, "StartContainer of an exited container")

	in := simInfo(t, ctx, clientStatus(c))
	if in.ViolationCount != 3 || len(in.Violations) != 3 {
		t.Fatalf("violations = %+v, want 3", in)
	}
	for _, v := range in.Violations {
		if !strings.Contains(v, "StartContainer") || !strings.Contains(v, id) {
			t.Errorf("violation %q does not name StartContainer and the container", v)
		}
	}
}

// TestSecondReadySandboxPerPod: two READY sandboxes for one pod UID is a
// violation; a new attempt after stopping the first is not.
func TestSecondReadySandboxPerPod(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	first := runPod(t, ctx, rt, podConfig("p", "uid-1", 0))
	runPod(t, ctx, rt, podConfig("p", "uid-1", 1)) // first is still READY
	in := rt.Info()
	if in.ViolationCount != 1 || !strings.Contains(in.Violations[0], "uid-1") {
		t.Fatalf("violations = %+v", in)
	}
	if in.ReadySandboxes != 2 {
		t.Fatalf("ready sandboxes = %d (the runtime does not refuse)", in.ReadySandboxes)
	}

	// The proper sequence: stop, then a new attempt.
	_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: first})
	noErr(t, err, "StopPodSandbox")
	other := runPod(t, ctx, rt, podConfig("q", "uid-2", 0))
	_, err = rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: other})
	noErr(t, err, "StopPodSandbox")
	runPod(t, ctx, rt, podConfig("q", "uid-2", 1))
	// Without the label the metadata UID identifies the pod.
	noLabel := podConfig("r", "uid-3", 0)
	delete(noLabel.Labels, LabelPodUID)
	runPod(t, ctx, rt, noLabel)
	noLabel.Metadata.Attempt = 1
	runPod(t, ctx, rt, noLabel)
	if in := rt.Info(); in.ViolationCount != 2 {
		t.Fatalf("violations = %+v, want 2", in)
	}
}

// TestCreateInNotReadySandboxIsRecorded.
func TestCreateInNotReadySandboxIsRecorded(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "StopPodSandbox")
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("a", "busybox")})
	wantCode(t, err, codes.FailedPrecondition, "CreateContainer in a NOTREADY sandbox")
	in := rt.Info()
	if in.ViolationCount != 1 || !strings.Contains(in.Violations[0], "CreateContainer") || in.Containers != 0 {
		t.Fatalf("info = %+v", in)
	}
}
