package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestTearDown(t *testing.T) {
	e := newEnv(t)
	e.src.putSecret("ns", "creds", map[string]string{"k": "v"})
	pod := testPod(
		secretVolume("creds", "creds", false),
		corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}}},
	)
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.mnt.mounted) != 2 {
		t.Fatalf("mounted = %v, want 2", e.mnt.mounted)
	}
	other := testPod()
	other.UID = "uid-2"
	other.Spec.Volumes = []corev1.Volume{{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if _, err := e.m.SetUp(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	uids, err := e.m.PodDirs(context.Background())
	if err != nil || !slices.Equal(uids, []string{"uid-1", "uid-2"}) {
		t.Fatalf("PodDirs = %v, %v", uids, err)
	}

	for range 2 { // idempotent
		if err := e.m.TearDown(context.Background(), "uid-1"); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.mnt.mounted) != 0 {
		t.Errorf("still mounted: %v", e.mnt.mounted)
	}
	if _, err := os.Stat(e.m.PodDir("uid-1")); !os.IsNotExist(err) {
		t.Errorf("pod dir remains (%v)", err)
	}
	if _, err := os.Stat(paths["host"]); err != nil {
		t.Errorf("hostPath removed: %v", err)
	}
	if uids, _ := e.m.PodDirs(context.Background()); !slices.Equal(uids, []string{"uid-2"}) {
		t.Errorf("PodDirs = %v, want [uid-2]", uids)
	}
}

func TestTearDownUnmountFailureKeepsFiles(t *testing.T) {
	e := newEnv(t)
	pod := testPod(corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	e.mnt.unmountErr = errors.New("device busy")
	if err := e.m.TearDown(context.Background(), "uid-1"); err == nil {
		t.Fatal("TearDown succeeded with a failing unmount")
	}
	if _, err := os.Stat(paths["shm"]); err != nil {
		t.Errorf("volume removed though still mounted: %v", err)
	}
	e.mnt.unmountErr = nil
	if err := e.m.TearDown(context.Background(), "uid-1"); err != nil {
		t.Fatal(err)
	}
}

func TestTearDownAfterCrashHalfWay(t *testing.T) {
	e := newEnv(t)
	// What a crash can leave: a pod dir with a volume half made and a
	// leftover ..data_tmp, a read-only directory, no mounts.
	dir := filepath.Join(e.m.PodDir("uid-9"), "volumes", pluginSecret, "s")
	if err := os.MkdirAll(filepath.Join(dir, "..2024_01_01_00_00_00.123"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..2024_01_01_00_00_00.123", filepath.Join(dir, newDataDirName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "..2024_01_01_00_00_00.123"), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := e.m.TearDown(context.Background(), "uid-9"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.m.PodDir("uid-9")); !os.IsNotExist(err) {
		t.Errorf("pod dir remains (%v)", err)
	}
}

func TestTearDownRejectsBadUIDs(t *testing.T) {
	e := newEnv(t)
	for _, uid := range []string{"", ".", "..", "../x", "a/b"} {
		if err := e.m.TearDown(context.Background(), uid); !errors.Is(err, ErrInvalid) {
			t.Errorf("TearDown(%q) = %v, want ErrInvalid", uid, err)
		}
	}
	if _, err := e.m.SetUp(context.Background(), &corev1.Pod{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetUp of a pod without UID: %v, want ErrInvalid", err)
	}
}

func TestNewNeedsAbsoluteRoot(t *testing.T) {
	for _, root := range []string{"", "rel"} {
		if _, err := New(Options{RootDir: root}); err == nil {
			t.Errorf("New(%q) succeeded", root)
		}
	}
}
