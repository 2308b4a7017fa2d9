package agent_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/actorlet/actorlet/cri/sim"
)

// TestProbesOnTheSimulatedRuntime runs real probe workers against the
// simulated runtime: pod IPs on loopback (127.91.0.0/16), where the
// simulated container serves HTTP (SIM_HTTP_PORT) and answers exec probes
// from SIM_EXEC_EXIT_CODE. An httpGet readiness probe makes the pod Ready
// and, once the endpoint answers 500, not Ready; an exec liveness probe
// that fails restarts the container.
func TestProbesOnTheSimulatedRuntime(t *testing.T) {
	e := newEnvWith(t, sim.Options{PodCIDR: "127.91.0.0/16"})
	fast := func(h corev1.ProbeHandler) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 1, FailureThreshold: 1}
	}
	web := pod("web", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_HTTP_PORT", Value: "8080"})
	web.Spec.Containers[0].ReadinessProbe = fast(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}})
	sick := pod("sick", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_EXEC_EXIT_CODE", Value: "1"})
	sick.Spec.Containers[0].LivenessProbe = fast(corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}})
	a := e.start(web, sick)
	defer a.Stop(t.Context())

	ready := func() (bool, string) {
		_, p := phaseOf(a, "uid-web")
		if p == nil || len(p.Status.ContainerStatuses) != 1 {
			return false, "no status"
		}
		return p.Status.ContainerStatuses[0].Ready, fmt.Sprintf("%+v", p.Status.ContainerStatuses[0])
	}
	waitFor(t, "web Ready through its httpGet probe", ready)
	_, p := phaseOf(a, "uid-web")
	id := p.Status.ContainerStatuses[0].ContainerID[len("actorlet-sim://"):]
	if err := e.rt.SetHTTPStatus(id, 500); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web not Ready once its endpoint answers 500", func() (bool, string) {
		ok, s := ready()
		return !ok, s
	})
	waitFor(t, "sick restarted by its liveness probe", func() (bool, string) {
		_, p := phaseOf(a, "uid-sick")
		if p == nil || len(p.Status.ContainerStatuses) != 1 {
			return false, "no status"
		}
		return p.Status.ContainerStatuses[0].RestartCount >= 2, fmt.Sprintf("%+v", p.Status.ContainerStatuses[0])
	})
	e.checkViolations()
}
