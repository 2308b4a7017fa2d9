package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/podspec"
)

type env struct {
	t      *testing.T
	rt     *sim.Runtime
	client *cri.Client
	root   string
	logs   string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, sim.Options{})
}

func newEnvWith(t *testing.T, opts sim.Options) *env {
	t.Helper()
	rt, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	client := cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { client.Close(); stop(); rt.Close() })
	return &env{t: t, rt: rt, client: client, root: t.TempDir(), logs: t.TempDir()}
}

func (e *env) start(pods ...*corev1.Pod) *agent.Agent {
	e.t.Helper()
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial = 50 * time.Millisecond
	lc.BackoffMax = 200 * time.Millisecond
	a, err := agent.Start(context.Background(), e.options(lc, pods)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func pod(name string, policy corev1.RestartPolicy, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{RestartPolicy: policy, Containers: []corev1.Container{
			{Name: "app", Image: "example/app:1", ImagePullPolicy: corev1.PullIfNotPresent, Env: env},
		}},
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

func phaseOf(a *agent.Agent, uid string) (corev1.PodPhase, *corev1.Pod) {
	p, ok := a.Statuses().Get(uid)
	if !ok {
		return "", nil
	}
	return p.Status.Phase, p
}

func (e *env) checkViolations() {
	e.t.Helper()
	if v := e.rt.Info().Violations; len(v) > 0 {
		e.t.Fatalf("CRI misuse seen by the runtime: %v", v)
	}
}

func TestPodsRunRestartAndStop(t *testing.T) {
	e := newEnv(t)
	a := e.start()
	crash := pod("crash", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "10ms"}, corev1.EnvVar{Name: "SIM_EXIT_CODE", Value: "3"})
	web := pod("web", corev1.RestartPolicyAlways)
	job := pod("job", corev1.RestartPolicyNever, corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "10ms"})
	a.SetPods("test", []*corev1.Pod{crash, web, job})

	waitFor(t, "web Running and ready", func() (bool, string) {
		ph, p := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning && p.Status.ContainerStatuses[0].Ready, string(ph)
	})
	waitFor(t, "job Succeeded", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-job")
		return ph == corev1.PodSucceeded, string(ph)
	})
	waitFor(t, "crash restarted with back-off at least 3 times", func() (bool, string) {
		_, p := phaseOf(a, "uid-crash")
		if p == nil || len(p.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount >= 3, fmt.Sprintf("restarts=%d", cs.RestartCount)
	})

	a.SetPods("test", []*corev1.Pod{crash, job})
	waitFor(t, "web removed from the runtime", func() (bool, string) {
		v, err := e.client.ListPod(context.Background(), "uid-web")
		if err != nil {
			return false, err.Error()
		}
		_, known := a.Statuses().Get("uid-web")
		return v.Empty() && !known, fmt.Sprintf("sandboxes=%d known=%v", len(v.Sandboxes), known)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.checkViolations()
}

// TestPodLogDirectories checks the kubelet's log layout: the pod's and each
// container's directory exist before the runtime writes there, and go with
// the pod.
func TestPodLogDirectories(t *testing.T) {
	e := newEnv(t)
	a := e.start()
	web := pod("web", corev1.RestartPolicyAlways)
	a.SetPods("test", []*corev1.Pod{web})
	dir := filepath.Join(e.logs, "default_web_uid-web")
	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, string(ph)
	})
	if fi, err := os.Stat(filepath.Join(dir, "app")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
		t.Fatalf("container log directory: %v %v", fi, err)
	}
	a.SetPods("test", nil)
	waitFor(t, "the pod's log directory removed with the pod", func() (bool, string) {
		_, known := a.Statuses().Get("uid-web")
		_, err := os.Stat(dir)
		return !known && os.IsNotExist(err), fmt.Sprintf("known=%v stat=%v", known, err)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRestartAdoptsRunningContainers(t *testing.T) {
	e := newEnv(t)
	a := e.start()
	var pods []*corev1.Pod
	for i := range 10 {
		pods = append(pods, pod(fmt.Sprintf("p%d", i), corev1.RestartPolicyAlways))
	}
	a.SetPods("test", pods)
	ids := map[string]string{}
	waitFor(t, "all pods Running", func() (bool, string) {
		n := 0
		for _, p := range pods {
			if ph, st := phaseOf(a, string(p.UID)); ph == corev1.PodRunning && st.Status.ContainerStatuses[0].State.Running != nil {
				ids[string(p.UID)] = st.Status.ContainerStatuses[0].ContainerID
				n++
			}
		}
		return n == len(pods), fmt.Sprintf("%d running", n)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A new agent on the same root dir and runtime takes the pods over
	// without restarting anything.
	b := e.start(pods...)
	defer b.Stop(context.Background())
	waitFor(t, "all pods Running again with the same containers", func() (bool, string) {
		for _, p := range pods {
			ph, st := phaseOf(b, string(p.UID))
			if ph != corev1.PodRunning {
				return false, string(p.UID) + " " + string(ph)
			}
			cs := st.Status.ContainerStatuses[0]
			if cs.ContainerID != ids[string(p.UID)] || cs.RestartCount != 0 {
				t.Fatalf("pod %s: container %s restarts=%d, was %s", p.UID, cs.ContainerID, cs.RestartCount, ids[string(p.UID)])
			}
		}
		return true, ""
	})
	info := e.rt.Info()
	if info.Sandboxes != len(pods) || info.Containers != len(pods) {
		t.Fatalf("runtime holds %d sandboxes and %d containers for %d pods", info.Sandboxes, info.Containers, len(pods))
	}
	e.checkViolations()
}

// TestRemovedPodsAreCompacted: a removed pod's final snapshot stays in the
// journal for the retention time, then recovery deletes it.
func TestRemovedPodsAreCompacted(t *testing.T) {
	e := newEnv(t)
	web := pod("web", corev1.RestartPolicyAlways)
	a := e.start(web)
	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, string(ph)
	})
	a.SetPods("test", nil)
	// Done, not only removed: its clean-up journaled (PodCleanedUp) and
	// its actor gone. A pod stopped before that is kept by compaction.
	waitFor(t, "web removed and cleaned up", func() (bool, string) {
		_, known := a.Statuses().Get("uid-web")
		active, err := a.ActivePods(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return !known && !slices.Contains(active, "uid-web"), fmt.Sprintf("status known %v, actors %v", known, active)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	journaled := func(retention time.Duration) bool {
		t.Helper()
		b, err := agent.Start(context.Background(), agent.WithNodeName("node-1"), agent.WithRootDir(e.root), agent.WithRuntime(e.client, ""),
			agent.WithRemovedRetention(retention), agent.WithLogger(zaptest.NewLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop(context.Background())
		uids, err := b.Journal().Pods(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(uids) == 1 && uids[0] == "uid-web"
	}
	if !journaled(time.Hour) {
		t.Fatal("the removed pod's snapshot is gone before its retention time")
	}
	if journaled(time.Nanosecond) {
		t.Fatal("the removed pod is still in the journal after its retention time")
	}
}

// options are the test node's options: e's runtime and directories, lc,
// and pods as the first set of source "test".
func (e *env) options(lc lifecycle.Config, pods []*corev1.Pod) []agent.Option {
	return []agent.Option{
		agent.WithNodeName("node-1"), agent.WithRootDir(e.root), agent.WithRuntime(e.client, "actorlet-sim"),
		agent.WithPodConfig(podspec.Options{PodLogsDir: e.logs}), agent.WithLifecycle(lc),
		agent.WithRelistPeriod(50 * time.Millisecond), agent.WithLogger(zaptest.NewLogger(e.t)),
		agent.WithPods("test", pods),
	}
}
