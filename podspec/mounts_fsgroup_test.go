package podspec

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A missing subPath of a volume given an fsGroup (group, setgid; a tmpfs
// emptyDir also sticky) is made with the volume's group and all its mode
// bits, as the kubelet's SafeMakeDir makes it: the upstream spec "nonexistent
// volume subPath should have the correct mode and owner using FSGroup"
// expects dgtrwxrwxrwx and group 123.
func TestContainerMountsSubPathFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		// As node/volumes' needRoot: .ci/run runs as root and requires it.
		if os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") != "" {
			t.Fatal("ACTORLET_E2E_REQUIRE_CONTAINERD is set but not root: giving a directory an arbitrary group needs root")
		}
		t.Skip("giving a directory an arbitrary group needs root")
	}
	paths := volumeDirs(t)
	const gid = 123
	volMode := fs.FileMode(0o777) | fs.ModeSetgid | fs.ModeSticky
	if err := os.Chown(paths["data"], -1, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(paths["data"], volMode); err != nil {
		t.Fatal(err)
	}
	pod := mountsPod(corev1.VolumeMount{Name: "data", MountPath: "/test-volume", SubPath: "test-sub/deeper"})
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(paths["data"], "test-sub"), got[0].HostPath} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky); m != volMode {
			t.Errorf("%s: mode %v, want %v", d, m, volMode)
		}
		if g := fi.Sys().(*syscall.Stat_t).Gid; g != gid {
			t.Errorf("%s: group %d, want %d", d, g, gid)
		}
	}
}
