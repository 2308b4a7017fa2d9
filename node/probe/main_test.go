package probe

import (
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // polling interval, not a wait for an event
	}
}

// target is a container "app" of a pod with IP ip.
func target(ip string, ports ...corev1.ContainerPort) Target {
	c := &corev1.Container{Name: "app", Ports: ports}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{*c}}}
	pod.Name, pod.Namespace = "web", "default"
	return Target{Pod: pod, Container: c, ContainerID: "cid-1", PodIP: ip}
}
