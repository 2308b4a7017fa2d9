package volumes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// recordingObserver keeps "plugin operation ok|fail" per call.
type recordingObserver struct {
	mu  sync.Mutex
	ops []string
}

func (r *recordingObserver) VolumeOperation(plugin, operation string, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	status := "ok"
	if err != nil {
		status = "fail"
	}
	r.ops = append(r.ops, fmt.Sprintf("%s %s %s", plugin, operation, status))
}

// TestObserverSeesEachMountAndUnmount: one volume_mount per volume with the
// kubelet's plugin names, a failed one marked so, and one volume_unmount
// per plugin of the pod at tear-down, a failed unmount marked so.
func TestObserverSeesEachMountAndUnmount(t *testing.T) {
	e := newEnv(t)
	obs := &recordingObserver{}
	e.m.observer = obs
	e.src.putSecret("ns", "creds", map[string]string{"k": "v"})
	pod := testPod(
		secretVolume("creds", "creds", false),
		secretVolume("missing", "missing", false),
		corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}}},
	)
	if _, err := e.m.SetUp(context.Background(), pod); err == nil {
		t.Fatal("SetUp succeeded with a missing secret")
	}
	want := []string{
		"kubernetes.io/secret volume_mount ok",
		"kubernetes.io/secret volume_mount fail",
		"kubernetes.io/empty-dir volume_mount ok",
		"kubernetes.io/host-path volume_mount ok",
	}
	if !slices.Equal(obs.ops, want) {
		t.Fatalf("after SetUp: %q, want %q", obs.ops, want)
	}
	obs.ops = nil
	e.mnt.unmountErr = errors.New("device busy")
	if err := e.m.TearDown(context.Background(), "uid-1"); err == nil {
		t.Fatal("TearDown succeeded with a failing unmount")
	}
	e.mnt.unmountErr = nil
	if err := e.m.TearDown(context.Background(), "uid-1"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(obs.ops)
	want = []string{
		"kubernetes.io/empty-dir volume_unmount fail",
		"kubernetes.io/empty-dir volume_unmount ok",
		"kubernetes.io/secret volume_unmount fail",
		"kubernetes.io/secret volume_unmount ok",
	}
	if !slices.Equal(obs.ops, want) {
		t.Errorf("after TearDown: %q, want %q", obs.ops, want)
	}
}
