package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri"
)

// containerdEnv is the containerd that test/e2e/env.sh set up (`make test`
// runs `env.sh up` and passes its env file on). Without it the containerd
// tests skip, unless ACTORLET_E2E_REQUIRE_CONTAINERD is set (CI sets it):
// then a missing or unreachable containerd fails them with the reason.
type containerdEnv struct {
	endpoint string
	// flavor is "upstream" (containerd 2.x, serves container events) or
	// "debian" (containerd 1.6, does not).
	flavor   string
	script   string // env.sh, for stop-containerd and start-containerd
	workload string // the test workload image (test/images/workload)
	crictl   string
	client   *cri.Client
}

func needContainerd(t *testing.T) *containerdEnv {
	t.Helper()
	e := &containerdEnv{
		endpoint: os.Getenv("ACTORLET_CONTAINERD_ENDPOINT"),
		flavor:   os.Getenv("ACTORLET_CONTAINERD_FLAVOR"),
		script:   os.Getenv("ACTORLET_E2E_ENV"),
		workload: os.Getenv("ACTORLET_E2E_WORKLOAD_IMAGE"),
		crictl:   os.Getenv("ACTORLET_CRICTL"),
	}
	if e.endpoint == "" {
		if os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") != "" {
			t.Fatal("ACTORLET_E2E_REQUIRE_CONTAINERD is set but ACTORLET_CONTAINERD_ENDPOINT is not: " +
				"`test/e2e/env.sh up` did not run or its env file was not sourced")
		}
		t.Skip("no containerd environment (ACTORLET_CONTAINERD_ENDPOINT unset); `make test` sets one up")
	}
	if e.script == "" || e.workload == "" {
		t.Fatalf("containerd environment incomplete: ACTORLET_E2E_ENV=%q ACTORLET_E2E_WORKLOAD_IMAGE=%q", e.script, e.workload)
	}
	client, err := cri.Dial(context.Background(), e.endpoint, "", cri.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("dial containerd at %s: %v", e.endpoint, err)
	}
	t.Cleanup(func() { client.Close() })
	e.client = client
	e.waitUp(t)
	return e
}

// waitUp waits until containerd answers the CRI.
func (e *containerdEnv) waitUp(t *testing.T) {
	t.Helper()
	waitFor(t, "containerd to answer at "+e.endpoint, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := e.client.Version(ctx)
		return err == nil, fmt.Sprint(err)
	})
}

// servesEvents tells whether this containerd serves GetContainerEvents.
func (e *containerdEnv) servesEvents() bool { return e.flavor != "debian" }

// run runs env.sh with a command (stop-containerd, start-containerd).
func (e *containerdEnv) run(t *testing.T, command string) {
	t.Helper()
	out, err := exec.Command(e.script, command).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", e.script, command, err, out)
	}
}

// crictlOut runs crictl against this containerd and returns its stdout.
func (e *containerdEnv) crictlOut(t *testing.T, args ...string) string {
	t.Helper()
	if e.crictl == "" {
		t.Fatal("ACTORLET_CRICTL is not set")
	}
	args = append([]string{"--runtime-endpoint", e.endpoint, "--image-endpoint", e.endpoint, "--timeout", "30s"}, args...)
	cmd := exec.Command(e.crictl, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crictl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// nodeDirs makes a node's directories with its own node name (its static
// pods are named <pod>-<name>, so tests sharing this containerd tell their
// pods apart). When the test ends, after its nodes are killed, whatever
// containerd still runs of this node is removed.
func (e *containerdEnv) nodeDirs(t *testing.T, name string) nodeDirs {
	t.Helper()
	d := newNodeDirs(t)
	d.name = name
	t.Cleanup(func() {
		ctx := context.Background()
		views, err := e.client.ListPods(ctx)
		if err != nil {
			t.Logf("cleanup of %s: %v", name, err)
			return
		}
		for _, v := range views {
			if !strings.HasSuffix(v.Name, "-"+name) {
				continue
			}
			for _, sb := range v.Sandboxes {
				if err := e.client.StopPodSandbox(ctx, sb.ID); err != nil {
					t.Logf("cleanup: stop sandbox %s: %v", sb.ID, err)
				}
				err := e.client.RemovePodSandbox(ctx, sb.ID)
				if cri.KindOf(err) == cri.FailedPrecondition {
					// A container containerd reports exited but keeps a
					// task for (see cri.Client.EndStrandedTask): end its
					// task, so a failed test leaves nothing to the next.
					for _, c := range v.Containers {
						if c.SandboxID == sb.ID && c.State == cri.ContainerExited {
							_ = e.client.EndStrandedTask(ctx, c.ID)
						}
					}
					err = e.client.RemovePodSandbox(ctx, sb.ID)
				}
				if err != nil {
					t.Logf("cleanup: remove sandbox %s: %v", sb.ID, err)
				}
			}
		}
	})
	return d
}

// podSpec is a static pod on the test workload image; containers maps a
// container name to its YAML lines after `image:` (args, resources, ...).
type podSpec struct {
	name          string
	restartPolicy string // "" is Always
	grace         int    // terminationGracePeriodSeconds (default 2)
	hostNetwork   bool
	containers    []containerSpec
	// initContainers run before containers (an extra of
	// "    restartPolicy: Always\n" makes one a sidecar).
	initContainers []containerSpec
	// extra is more YAML for the pod spec, each line indented by 2 spaces.
	extra string
}

type containerSpec struct {
	name  string
	args  []string
	extra string // more YAML for the container, each line indented by 4 spaces
}

func (e *containerdEnv) manifest(p podSpec) string {
	var b strings.Builder
	grace := p.grace
	if grace == 0 {
		grace = 2
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  terminationGracePeriodSeconds: %d\n", p.name, grace)
	if p.restartPolicy != "" {
		fmt.Fprintf(&b, "  restartPolicy: %s\n", p.restartPolicy)
	}
	if p.hostNetwork {
		b.WriteString("  hostNetwork: true\n")
	}
	b.WriteString(p.extra)
	if len(p.initContainers) > 0 {
		b.WriteString("  initContainers:\n")
		e.writeContainers(&b, p.initContainers)
	}
	b.WriteString("  containers:\n")
	e.writeContainers(&b, p.containers)
	return b.String()
}

func (e *containerdEnv) writeContainers(b *strings.Builder, cs []containerSpec) {
	for _, c := range cs {
		fmt.Fprintf(b, "  - name: %s\n    image: %s\n    imagePullPolicy: Never\n", c.name, e.workload)
		if len(c.args) > 0 {
			quoted := make([]string, len(c.args))
			for i, a := range c.args {
				quoted[i] = fmt.Sprintf("%q", a)
			}
			fmt.Fprintf(b, "    args: [%s]\n", strings.Join(quoted, ", "))
		}
		b.WriteString(c.extra)
	}
}
