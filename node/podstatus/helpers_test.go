package podstatus

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/actors"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestCache(t *testing.T) (*Cache, *prometheus.Registry, *clocktesting.FakeClock) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	clk := clocktesting.NewFakeClock(t0)
	return New(reg, clk), reg, clk
}

// pod builds a pod in namespace ns named name with the given containers; its
// UID is name's.
func pod(ns, name string, phase corev1.PodPhase, containers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Status:     corev1.PodStatus{Phase: phase},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "img"})
	}
	return p
}

func withSandboxReady(p *corev1.Pod, ready bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: st})
	return p
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: "containerd://" + name,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}
}

func exited(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: "containerd://" + name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
	}
}

func crashLooping(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: "containerd://" + name,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}},
	}
}

func created(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: name, ContainerID: "containerd://" + name,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}
}

func pulling(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:  name,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}
}

func noState(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, ContainerID: "containerd://" + name}
}

func withContainers(p *corev1.Pod, cs ...corev1.ContainerStatus) *corev1.Pod {
	p.Status.ContainerStatuses = cs
	return p
}

// upd is a status update for p (UID from p), accepted at t0.
func upd(p *corev1.Pod, seq uint64) actors.PodUpdate {
	return actors.PodUpdate{UID: string(p.UID), Pod: p, Seq: seq, AcceptedAt: t0}
}

func removed(uid string, seq uint64) actors.PodUpdate {
	return actors.PodUpdate{UID: uid, Seq: seq, Removed: true}
}

// startHistogram returns the sample count and sum of the pod start
// duration histogram gathered from reg.
func startHistogram(t *testing.T, reg prometheus.Gatherer) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == PodStartDurationName {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatalf("%s not gathered", PodStartDurationName)
	return 0, 0
}
