package volumes

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// needRoot skips a test that needs root (chown to an arbitrary group,
// mount) when not root, as `make test-unit` runs; where the full
// environment is required (ACTORLET_E2E_REQUIRE_CONTAINERD, set by .ci/run,
// which runs as root) it fails instead, so that it cannot pass unrun.
func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") != "" {
		t.Fatalf("ACTORLET_E2E_REQUIRE_CONTAINERD is set but not root: %s", why)
	}
	t.Skip(why)
}

func gidOf(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky)
}

func withFSGroup(pod *corev1.Pod, gid int64) *corev1.Pod {
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: &gid}
	return pod
}

// An emptyDir of a pod with an fsGroup has that group and the setgid bit
// (on disk and on a tmpfs, whose root keeps its sticky bit), so that what
// a container makes in it has the group, as the kubelet's upstream specs
// "EmptyDir volumes when FSGroup is specified" check.
func TestEmptyDirFSGroup(t *testing.T) {
	needRoot(t, "changing a file's group to an arbitrary fsGroup needs root")
	for _, tc := range []struct {
		name   string
		medium corev1.StorageMedium
		want   fs.FileMode
	}{
		{"disk", corev1.StorageMediumDefault, 0o777 | fs.ModeSetgid},
		{"tmpfs", corev1.StorageMediumMemory, 0o777 | fs.ModeSetgid | fs.ModeSticky},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			pod := withFSGroup(testPod(corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{Medium: tc.medium}}}), 123)
			paths, err := e.m.SetUp(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			dir := paths["v"]
			if g := gidOf(t, dir); g != 123 {
				t.Errorf("emptyDir group = %d, want 123", g)
			}
			if m := modeOf(t, dir); m != tc.want {
				t.Errorf("emptyDir mode = %v, want %v", m, tc.want)
			}
			// A file made in it (by root, as the container) inherits the group.
			f := filepath.Join(dir, "new")
			if err := os.WriteFile(f, nil, 0o660); err != nil {
				t.Fatal(err)
			}
			if g := gidOf(t, f); g != 123 {
				t.Errorf("new file's group = %d, want 123", g)
			}

			// SetUp again: a root already given the group is not walked
			// again (the file whose group a container changed keeps it).
			if err := os.Lchown(f, -1, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := e.m.SetUp(context.Background(), pod); err != nil {
				t.Fatal(err)
			}
			if g := gidOf(t, f); g != 0 {
				t.Errorf("second SetUp changed a file's group to %d", g)
			}
			// A root without the group (a walk cut short by a crash: the
			// root is changed last) is walked again in full.
			if err := os.Lchown(dir, -1, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := e.m.SetUp(context.Background(), pod); err != nil {
				t.Fatal(err)
			}
			if g, m := gidOf(t, f), modeOf(t, f); g != 123 || m != 0o660 {
				t.Errorf("after an interrupted walk: file group %d mode %v, want 123 and 0660", g, m)
			}
		})
	}
}

// Without an fsGroup nothing changes: no setgid, the group is the node's.
func TestEmptyDirWithoutFSGroup(t *testing.T) {
	e := newEnv(t)
	pod := testPod(corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, paths["v"]); m != 0o777 {
		t.Errorf("emptyDir mode = %v, want 0777", m)
	}
	if g := gidOf(t, paths["v"]); g != uint32(os.Getegid()) {
		t.Errorf("emptyDir group = %d, want the node's %d", g, os.Getegid())
	}
}

// A secret volume of a pod with an fsGroup: every file and directory has
// the group, files get group read added to their mode (defaultMode 0400
// reads as 0440), directories setgid; an unchanged volume is not written
// again.
func TestDataVolumeFSGroup(t *testing.T) {
	needRoot(t, "changing a file's group to an arbitrary fsGroup needs root")
	e := newEnv(t)
	e.src.putSecret("ns", "creds", map[string]string{"k": "v"})
	vol := secretVolume("s", "creds", false, corev1.KeyToPath{Key: "k", Path: "sub/k"})
	vol.Secret.DefaultMode = ptr[int32](0o400)
	pod := withFSGroup(testPod(vol), 1234)
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["s"]
	ts := filepath.Join(dir, dataTarget(t, dir))
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{
		{dir, 0o755 | fs.ModeSetgid},
		{ts, 0o755 | fs.ModeSetgid},
		{filepath.Join(ts, "sub"), 0o755 | fs.ModeSetgid},
		{filepath.Join(ts, "sub", "k"), 0o440},
	} {
		if g := gidOf(t, c.path); g != 1234 {
			t.Errorf("%s: group %d, want 1234", c.path, g)
		}
		if m := modeOf(t, c.path); m != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, m, c.want)
		}
	}
	if _, err := e.m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := filepath.Join(dir, dataTarget(t, dir)); got != ts {
		t.Errorf("an unchanged volume was written again (%s, was %s)", got, ts)
	}
}

// A projected token with an fsGroup is 0600 plus the group's read bit,
// as in the kubelet, whatever the defaultMode.
func TestProjectedTokenFSGroupMode(t *testing.T) {
	needRoot(t, "changing a file's group to an arbitrary fsGroup needs root")
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"c": "C"})
	e.src.putSecret("ns", "creds", map[string]string{"password": "pw"})
	pod := withFSGroup(projectedPod(), 42)
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, filepath.Join(paths["all"], "token")); m != 0o640 {
		t.Errorf("token mode = %v, want 0640", m)
	}
	if g := gidOf(t, filepath.Join(paths["all"], "token")); g != 42 {
		t.Errorf("token group = %d, want 42", g)
	}
}
