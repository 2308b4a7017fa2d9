//go:build linux

package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSystemMounterTmpfs mounts a real tmpfs in a temp dir; it needs root
// (CAP_SYS_ADMIN) and is skipped otherwise.
func TestSystemMounterTmpfs(t *testing.T) {
	needRoot(t, "mounting needs root")
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var m SystemMounter
	if err := m.MountTmpfs(ctx, dir, 1<<20); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("cannot mount here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	if ok, err := m.IsMountPoint(ctx, dir); err != nil || !ok {
		t.Fatalf("IsMountPoint = %v, %v after mount", ok, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Errorf("statfs type = %x, %v; want tmpfs", st.Type, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Unmount(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.IsMountPoint(ctx, dir); err != nil || ok {
		t.Errorf("IsMountPoint = %v, %v after unmount", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); !os.IsNotExist(err) {
		t.Errorf("file of the tmpfs visible after unmount (%v)", err)
	}
	if err := m.Unmount(ctx, dir); err != nil {
		t.Errorf("second Unmount = %v, want nil", err)
	}
}

// TestRemoveAllOneFSStopsAtMounts checks that TearDown's removal refuses
// to cross into a mounted file system (needs root).
func TestRemoveAllOneFSStopsAtMounts(t *testing.T) {
	needRoot(t, "mounting needs root")
	root := t.TempDir()
	mnt := filepath.Join(root, "pod", "vol")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (SystemMounter{}).MountTmpfs(context.Background(), mnt, 1<<20); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	keep := filepath.Join(mnt, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := removeAllOneFS(filepath.Join(root, "pod")); err == nil {
		t.Fatal("removal crossed a mount point")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("file on the mount removed: %v", err)
	}
}
