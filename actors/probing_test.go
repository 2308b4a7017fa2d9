package actors

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// fakeProbers records the targets each pod's prober was given and lets the
// test report results as a probe worker would.
type fakeProbers struct {
	mu      sync.Mutex
	report  func(*pb.ProbeResult)
	observe func(Probed)
	targets []lifecycle.ProbeTarget
	ip      string
	stopped bool
}

func (f *fakeProbers) ForPod(_ *corev1.Pod, report func(*pb.ProbeResult), observe func(Probed)) PodProber {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.report, f.observe = report, observe
	return f
}

func (f *fakeProbers) Sync(_ context.Context, ip string, t []lifecycle.ProbeTarget) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ip, f.targets = ip, t
}

func (f *fakeProbers) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
}

func (f *fakeProbers) target() (lifecycle.ProbeTarget, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.targets) != 1 {
		return lifecycle.ProbeTarget{}, "", false
	}
	return f.targets[0], f.ip, true
}

func (f *fakeProbers) send(r *pb.ProbeResult) {
	f.mu.Lock()
	report := f.report
	f.mu.Unlock()
	report(r)
}

// TestProbesDriveReadinessAndRestarts: a container with a readiness probe
// is not ready until the prober says so; a liveness failure restarts it,
// (the first restart has no back-off) and the new container is probed
// under its own ID.
func TestProbesDriveReadinessAndRestarts(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	probers := &fakeProbers{}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Probers: probers, Logger: zaptest.NewLogger(t)}, j)
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
			ReadinessProbe: probe, LivenessProbe: probe}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})

	status := func() (corev1.ContainerStatus, bool) {
		u, ok := st.get("uid-p")
		if !ok || u.Status == nil || len(u.Status.ContainerStatuses) != 1 {
			return corev1.ContainerStatus{}, false
		}
		return u.Status.ContainerStatuses[0], true
	}
	var first lifecycle.ProbeTarget
	waitUntil(t, "the running container handed to the prober", func() bool {
		tg, ip, ok := probers.target()
		first = tg
		return ok && ip != "" && tg.Name == "app" && tg.StartupDone
	})
	if cs, _ := status(); cs.State.Running == nil || cs.Ready {
		t.Fatalf("before any readiness result: %+v, want running and not ready", cs)
	}
	probers.send(&pb.ProbeResult{Name: "app", ContainerId: first.ContainerID, Kind: pb.ProbeKind_PROBE_READINESS, Success: true})
	waitUntil(t, "ready", func() bool { cs, ok := status(); return ok && cs.Ready })

	probers.send(&pb.ProbeResult{Name: "app", ContainerId: first.ContainerID, Kind: pb.ProbeKind_PROBE_LIVENESS, Message: "dead"})
	waitUntil(t, "restarted under a new ID and probed", func() bool {
		tg, _, ok := probers.target()
		cs, _ := status()
		return ok && tg.ContainerID != first.ContainerID && cs.RestartCount == 1 && cs.State.Running != nil && !cs.Ready
	})
}

type failingHooks struct{ post, pre error }

func (h failingHooks) Hook(_ context.Context, _ *corev1.Pod, _ *corev1.Container, _, _ string, l *corev1.LifecycleHandler) error {
	if l.Exec != nil && l.Exec.Command[0] == "post" {
		return h.post
	}
	return h.pre
}

// TestFailedPostStartRestartsTheContainer: a PostStart hook that fails has
// the container killed and restarted; the failure is journaled.
func TestFailedPostStartRestartsTheContainer(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Hooks: failingHooks{post: errors.New("exit code 1")}, Logger: zaptest.NewLogger(t)}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
			Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"post"}}}}}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "restarted after its PostStart failed", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Status != nil && len(u.Status.ContainerStatuses) == 1 && u.Status.ContainerStatuses[0].RestartCount >= 1
	})
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, env := range j.streams["uid-p"] {
		if h := env.GetEvent().GetHookFailed(); h != nil && h.Hook == lifecycle.HookPostStart && h.Message == "exit code 1" {
			return
		}
	}
	t.Fatal("no HookFailed PostStart in the journal")
}

// probeEvents is an EventSink that is also a ProbeSink: it keeps the probe
// runs it is told of.
type probeEvents struct {
	mu   sync.Mutex
	runs []Probed
	pods []*corev1.Pod
}

func (*probeEvents) Recorded(*corev1.Pod, []*pb.Envelope) {}
func (*probeEvents) Acting(*corev1.Pod, lifecycle.Effect) {}

func (p *probeEvents) Probed(pod *corev1.Pod, r Probed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs, p.pods = append(p.runs, r), append(p.pods, pod)
}

func (p *probeEvents) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.runs)
}

// TestEveryProbeRunReachesTheProbeSink: a readiness probe failing from the
// start; each run reaches the event sinks (the kubelet's Unhealthy per
// failed run) with the pod, and none is journaled.
func TestEveryProbeRunReachesTheProbeSink(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	probers := &fakeProbers{}
	sink := &probeEvents{}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Probers: probers, Events: EventSinks{sink}, Logger: zaptest.NewLogger(t)}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}}}}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	var tg lifecycle.ProbeTarget
	waitUntil(t, "the running container handed to the prober", func() bool {
		var ok bool
		tg, _, ok = probers.target()
		return ok
	})
	probers.mu.Lock()
	observe := probers.observe
	probers.mu.Unlock()
	if observe == nil {
		t.Fatal("the prober was given no observer although the event sinks take probe runs")
	}
	journaled := func() int {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.streams["uid-p"])
	}
	before := journaled()
	failed := Probed{Container: "app", ContainerID: tg.ContainerID, Kind: pb.ProbeKind_PROBE_READINESS, Outcome: ProbeFailed, Message: "exit 1"}
	for range 3 {
		observe(failed)
	}
	// The thresholded result: not ready, as the container already was.
	probers.send(&pb.ProbeResult{Name: "app", ContainerId: tg.ContainerID, Kind: pb.ProbeKind_PROBE_READINESS, Message: "exit 1"})
	waitUntil(t, "three probe runs told", func() bool { return sink.count() == 3 })
	sink.mu.Lock()
	for i, r := range sink.runs {
		if r != failed || sink.pods[i] == nil || sink.pods[i].UID != "uid-p" {
			t.Errorf("run %d: %+v of pod %v, want %+v of uid-p", i, r, sink.pods[i], failed)
		}
	}
	sink.mu.Unlock()
	// A later input has been handled once its status is out; the failed
	// result journaled nothing.
	probers.send(&pb.ProbeResult{Name: "app", ContainerId: tg.ContainerID, Kind: pb.ProbeKind_PROBE_READINESS, Success: true})
	waitUntil(t, "ready", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Status != nil && len(u.Status.ContainerStatuses) == 1 && u.Status.ContainerStatuses[0].Ready
	})
	if got := journaled(); got != before+1 {
		t.Errorf("%d events journaled for three failed runs, a failed result and a success, want 1 (the success)", got-before)
	}
}
