package volumes

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestEmptyDirOnDisk(t *testing.T) {
	e := newEnv(t)
	pod := testPod(corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(e.root, "pods", "uid-1", "volumes", "kubernetes.io~empty-dir", "scratch")
	if paths["scratch"] != want {
		t.Fatalf("path = %q, want %q", paths["scratch"], want)
	}
	if p := perm(t, want); p != 0o777 {
		t.Errorf("emptyDir mode = %o, want 777", p)
	}
	for _, d := range []string{"pods/uid-1", "pods/uid-1/volumes", "pods/uid-1/volumes/kubernetes.io~empty-dir"} {
		if p := perm(t, filepath.Join(e.root, d)); p != 0o750 {
			t.Errorf("%s mode = %o, want 750", d, p)
		}
	}
	if e.mnt.mounts != 0 {
		t.Errorf("mounts = %d, want 0 for a disk emptyDir", e.mnt.mounts)
	}
}

func TestEmptyDirMemoryIsTmpfsOnce(t *testing.T) {
	e := newEnv(t)
	size := resource.MustParse("64Mi")
	pod := testPod(corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: &size}}})
	for range 2 {
		paths, err := e.m.SetUp(context.Background(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.mnt.mounted[paths["shm"]]; got != 64<<20 {
			t.Errorf("tmpfs size = %d, want %d", got, 64<<20)
		}
	}
	if e.mnt.mounts != 1 {
		t.Errorf("mounts = %d, want 1 (SetUp is idempotent)", e.mnt.mounts)
	}
}

func TestEmptyDirMemoryMountFailureFails(t *testing.T) {
	e := newEnv(t)
	e.mnt.mountErr = errors.New("operation not permitted")
	pod := testPod(corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	paths, err := e.m.SetUp(context.Background(), pod)
	var ve *VolumeError
	if !errors.As(err, &ve) || ve.Volume != "shm" {
		t.Fatalf("err = %v, want a VolumeError for shm", err)
	}
	if _, ok := paths["shm"]; ok {
		t.Error("a failed volume has a path")
	}
}

func TestEmptyDirHugePagesUnsupported(t *testing.T) {
	e := newEnv(t)
	pod := testPod(corev1.Volume{Name: "hp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}})
	if _, err := e.m.SetUp(context.Background(), pod); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
}
