package actors

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSandboxConfigLogsAndPrivilege(t *testing.T) {
	yes, uid := true, int64(1000)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			HostNetwork:     true,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: &uid},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{Privileged: &yes}},
			},
		},
	}
	cfg := SandboxConfig(pod, 2, PodConfigOptions{PodLogsDir: "/var/log/pods"})
	if cfg.LogDirectory != "/var/log/pods/ns_web_u1" {
		t.Errorf("LogDirectory = %q", cfg.LogDirectory)
	}
	if cfg.Hostname != "" {
		t.Errorf("hostNetwork sandbox gets hostname %q; runc refuses one without its own UTS namespace", cfg.Hostname)
	}
	sc := cfg.Linux.SecurityContext
	if !sc.Privileged || sc.RunAsUser.GetValue() != 1000 || sc.NamespaceOptions.Network.String() != "NODE" {
		t.Errorf("sandbox security context = %v", sc)
	}
	pod.Spec.Containers[1].SecurityContext = nil
	if SandboxConfig(pod, 2, PodConfigOptions{}).Linux.SecurityContext.Privileged {
		t.Error("sandbox privileged without a privileged container")
	}
}

func TestContainerConfigLogPathAndResources(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	c := &corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}}
	cfg := ContainerConfig(pod, c, 3)
	if cfg.LogPath != "app/2.log" {
		t.Errorf("LogPath = %q, want app/2.log (attempt 3 is restart 2)", cfg.LogPath)
	}
	r := cfg.Linux.Resources
	if r.CpuQuota != 25000 || r.CpuPeriod != 100000 || r.CpuShares != 256 || r.MemoryLimitInBytes != 64<<20 {
		t.Errorf("resources = %v", r)
	}
}
