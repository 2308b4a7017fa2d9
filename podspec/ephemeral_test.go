package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// An ephemeral container converts to the CRI config of a container of its
// fields (name, image, command, stdin/tty, log path, labels) and, with a
// target, joins the target's PID namespace unless the pod shares one.
func TestEphemeralContainerConfig(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "app:1"}},
			EphemeralContainers: []corev1.EphemeralContainer{{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debugger", Image: "busybox:1", Command: []string{"/bin/sh", "-c", "echo $(GREETING)"},
					Env:   []corev1.EnvVar{{Name: "GREETING", Value: "polo"}},
					Stdin: true, TTY: true,
				},
				TargetContainerName: "app",
			}},
		},
	}
	c, ephemeral := SpecContainer(pod, "debugger")
	if c == nil || !ephemeral || c.Image != "busybox:1" {
		t.Fatalf("SpecContainer(debugger) = %v, %v", c, ephemeral)
	}
	if app, eph := SpecContainer(pod, "app"); app == nil || eph {
		t.Errorf("SpecContainer(app) = %v, %v; want the app container, not ephemeral", app, eph)
	}
	if none, _ := SpecContainer(pod, "nope"); none != nil {
		t.Errorf("SpecContainer(nope) = %v", none)
	}

	cfg := LiteralContainerConfig(pod, c, 1)
	if cfg.Metadata.GetName() != "debugger" || cfg.Image.GetImage() != "busybox:1" || cfg.LogPath != "debugger/0.log" {
		t.Errorf("config = %v", cfg)
	}
	if got := cfg.Labels[cri.LabelContainerName]; got != "debugger" {
		t.Errorf("container name label = %q", got)
	}
	if len(cfg.Command) != 3 || cfg.Command[2] != "echo polo" || !cfg.Stdin || !cfg.Tty {
		t.Errorf("command %q stdin=%v tty=%v", cfg.Command, cfg.Stdin, cfg.Tty)
	}
	if r := cfg.Linux.Resources; r.CpuQuota != 0 || r.MemoryLimitInBytes != 0 {
		t.Errorf("an ephemeral container has no resources: %v", r)
	}

	TargetPIDNamespace(cfg, "c1")
	ns := cfg.Linux.SecurityContext.NamespaceOptions
	if ns.Pid != runtimeapi.NamespaceMode_TARGET || ns.TargetId != "c1" {
		t.Errorf("namespaces with target = %v, want pid TARGET c1", ns)
	}
	if ns.Network != runtimeapi.NamespaceMode_POD || ns.Ipc != runtimeapi.NamespaceMode_POD {
		t.Errorf("network and IPC are the pod's: %v", ns)
	}

	noTarget := LiteralContainerConfig(pod, c, 1)
	TargetPIDNamespace(noTarget, "")
	if ns := noTarget.Linux.SecurityContext.NamespaceOptions; ns.Pid != runtimeapi.NamespaceMode_CONTAINER || ns.TargetId != "" {
		t.Errorf("namespaces without target = %v", ns)
	}

	yes := true
	pod.Spec.ShareProcessNamespace = &yes
	shared := LiteralContainerConfig(pod, c, 1)
	TargetPIDNamespace(shared, "c1")
	if ns := shared.Linux.SecurityContext.NamespaceOptions; ns.Pid != runtimeapi.NamespaceMode_POD || ns.TargetId != "" {
		t.Errorf("a pod sharing its process namespace keeps it: %v", ns)
	}
}
