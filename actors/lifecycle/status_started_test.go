package lifecycle_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Every container status carries Started, as the kubelet's prober manager
// sets it: true only for a running container past its startup probe, false
// for any other, init and sidecar containers included. Upstream specs
// dereference it (a nil Started panicked "startup probe on a restartable
// init container").
func TestStatusStartedAlwaysSet(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			InitContainers: []corev1.Container{
				{Name: "init-done", Image: "img"},
				{Name: "init-waiting", Image: "img"},
				{Name: "init-running", Image: "img"},
				{Name: "side-probing", Image: "img", RestartPolicy: &always, StartupProbe: probe},
				{Name: "side-started", Image: "img", RestartPolicy: &always, StartupProbe: probe},
				{Name: "side-exited", Image: "img", RestartPolicy: &always},
			},
			Containers: []corev1.Container{
				{Name: "never-created", Image: "img"},
				{Name: "created", Image: "img"},
				{Name: "running", Image: "img"},
				{Name: "probing", Image: "img", StartupProbe: probe},
				{Name: "crashlooping", Image: "img"},
				{Name: "exited", Image: "img"},
				{Name: "failed", Image: "img"},
			},
		}}
	term := &pb.Termination{ExitCode: 1, Reason: "Error", StartedAtUnixNano: t0.UnixNano(), FinishedAtUnixNano: t0.UnixNano()}
	done := &pb.Termination{ExitCode: 0, Reason: "Completed", StartedAtUnixNano: t0.UnixNano(), FinishedAtUnixNano: t0.UnixNano()}
	running := func(id string, startupDone bool) *pb.ContainerRecord {
		return &pb.ContainerRecord{Id: id, Phase: pb.ContainerPhase_CONTAINER_RUNNING, StartedAtUnixNano: t0.UnixNano(), StartupDone: startupDone}
	}
	s := lifecycle.NewState("uid-1")
	s.Pod = pod
	s.P.AcceptedAtUnixNano = t0.UnixNano()
	s.P.Sandbox = &pb.SandboxRecord{Id: "sb", Phase: pb.SandboxPhase_SANDBOX_READY}
	s.P.Containers = map[string]*pb.ContainerRecord{
		"init-done":    {Id: "c1", Phase: pb.ContainerPhase_CONTAINER_EXITED, LastTermination: done},
		"init-running": running("c2", false),
		"side-probing": running("c3", false),
		"side-started": running("c4", true),
		"side-exited": {Id: "c5", Phase: pb.ContainerPhase_CONTAINER_EXITED, LastTermination: term,
			WaitingReason: "CrashLoopBackOff"},
		"created": {Id: "c6", Phase: pb.ContainerPhase_CONTAINER_CREATED},
		"running": running("c7", false),
		"probing": running("c8", false),
		"crashlooping": {Id: "c9", Phase: pb.ContainerPhase_CONTAINER_EXITED, LastTermination: term, RestartCount: 2,
			WaitingReason: "CrashLoopBackOff", WaitingMessage: "back-off"},
		"exited": {Id: "c10", Phase: pb.ContainerPhase_CONTAINER_EXITED, LastTermination: term},
		"failed": {Phase: pb.ContainerPhase_CONTAINER_FAILED, WaitingReason: "CreateContainerError"},
	}
	want := map[string]bool{
		"init-done": false, "init-waiting": false, "init-running": true,
		"side-probing": false, "side-started": true, "side-exited": false,
		"never-created": false, "created": false, "running": true, "probing": false,
		"crashlooping": false, "exited": false, "failed": false,
	}
	check := func(st corev1.PodStatus, what string) {
		t.Helper()
		seen := 0
		for _, cs := range append(append([]corev1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...) {
			seen++
			if cs.Started == nil {
				t.Errorf("%s: container %s (%s): started is nil", what, cs.Name, stateName(cs.State))
				continue
			}
			if *cs.Started != want[cs.Name] {
				t.Errorf("%s: container %s (%s): started=%v, want %v", what, cs.Name, stateName(cs.State), *cs.Started, want[cs.Name])
			}
		}
		if seen != len(want) {
			t.Errorf("%s: %d statuses, want %d", what, seen, len(want))
		}
	}
	check(lifecycle.Status(s, lifecycle.StatusEnv{RuntimeName: "containerd", Now: t0}), "live")

	// Terminating: the exited containers show their termination, still with
	// Started=false; the running ones keep theirs.
	s.P.Terminating = true
	check(lifecycle.Status(s, lifecycle.StatusEnv{RuntimeName: "containerd", Now: t0}), "terminating")

	// Statuses are separate values: changing one's Started changes no other.
	st := lifecycle.Status(s, lifecycle.StatusEnv{Now: t0})
	*st.ContainerStatuses[0].Started = true
	if *st.ContainerStatuses[1].Started || *st.InitContainerStatuses[0].Started {
		t.Fatal("container statuses share one Started pointer")
	}
}

func stateName(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return "terminated"
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason
	}
	return "no state"
}
