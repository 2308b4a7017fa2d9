package podspec

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodCgroupParent(t *testing.T) {
	pod := func(req, lim string) *corev1.Pod {
		c := corev1.Container{Name: "app"}
		if lim != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim), corev1.ResourceMemory: resource.MustParse("64Mi")}
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req), corev1.ResourceMemory: resource.MustParse("64Mi")}
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		root string
		want string
	}{
		{pod("", ""), "", "/kubepods/besteffort/podu1"},
		{pod("100m", "200m"), "/", "/kubepods/burstable/podu1"},
		{pod("200m", "200m"), "/actorlet", "/actorlet/kubepods/podu1"},
	} {
		if got := PodCgroupParent(c.root, c.pod); got != c.want {
			t.Errorf("PodCgroupParent(%q) = %q, want %q", c.root, got, c.want)
		}
	}
}

func TestRemovePodCgroup(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		root := t.TempDir()
		old := cgroupFS
		cgroupFS = root
		t.Cleanup(func() { cgroupFS = old })
		var dirs []string
		if v2 {
			if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			dirs = []string{filepath.Join(root, "kubepods/burstable/podu1")}
		} else {
			dirs = []string{filepath.Join(root, "cpu/kubepods/burstable/podu1"), filepath.Join(root, "memory/kubepods/burstable/podu1")}
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		busy := filepath.Join(dirs[0], "c1")
		if err := os.Mkdir(busy, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := RemovePodCgroup("/kubepods/burstable/podu1"); err == nil {
			t.Errorf("v2=%v: a pod cgroup with a child was removed without an error", v2)
		}
		if err := os.Remove(busy); err != nil {
			t.Fatal(err)
		}
		if err := RemovePodCgroup("/kubepods/burstable/podu1"); err != nil {
			t.Fatalf("v2=%v: %v", v2, err)
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("v2=%v: %s still there", v2, d)
			}
		}
		if err := RemovePodCgroup("/kubepods/burstable/podu1"); err != nil {
			t.Errorf("v2=%v: removing again: %v", v2, err)
		}
	}
}
