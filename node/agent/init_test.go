package agent_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestInitContainersOnTheSimulatedRuntime: the init container completes
// before the app starts; the sidecar starts before the app and keeps
// running while the app container crashes and restarts.
func TestInitContainersOnTheSimulatedRuntime(t *testing.T) {
	e := newEnv(t)
	always := corev1.ContainerRestartPolicyAlways
	p := pod("init", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "20ms"}, corev1.EnvVar{Name: "SIM_EXIT_CODE", Value: "1"})
	p.Spec.InitContainers = []corev1.Container{
		{Name: "setup", Image: "example/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
			Env: []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "10ms"}}},
		{Name: "proxy", Image: "example/app:1", ImagePullPolicy: corev1.PullIfNotPresent, RestartPolicy: &always},
	}
	a := e.start(p)
	defer a.Stop(t.Context())
	var proxyID string
	waitFor(t, "the app restarting while the sidecar runs", func() (bool, string) {
		_, got := phaseOf(a, "uid-init")
		if got == nil || len(got.Status.InitContainerStatuses) != 2 || len(got.Status.ContainerStatuses) != 1 {
			return false, "no status"
		}
		setup, proxy, app := got.Status.InitContainerStatuses[0], got.Status.InitContainerStatuses[1], got.Status.ContainerStatuses[0]
		if proxyID == "" && proxy.State.Running != nil {
			proxyID = proxy.ContainerID
		}
		if proxy.ContainerID != proxyID || proxy.RestartCount != 0 {
			t.Fatalf("the sidecar restarted: %+v", proxy)
		}
		return setup.State.Terminated != nil && setup.State.Terminated.ExitCode == 0 && setup.Ready &&
				proxy.State.Running != nil && app.RestartCount >= 2,
			fmt.Sprintf("setup %+v proxy %+v app %+v", setup.State, proxy.State, app)
	})
	e.checkViolations()
}
