//go:build linux

package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// SystemMounter is the Mounter of the host: mount(2) and umount(2). It
// needs CAP_SYS_ADMIN.
type SystemMounter struct{}

var _ Mounter = SystemMounter{}

// MountTmpfs mounts a tmpfs with the flags nosuid and nodev.
func (SystemMounter) MountTmpfs(ctx context.Context, target string, sizeBytes int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data := ""
	if sizeBytes > 0 {
		data = fmt.Sprintf("size=%d", sizeBytes)
	}
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
		return &os.PathError{Op: "mount tmpfs", Path: target, Err: err}
	}
	return nil
}

// Unmount unmounts target; EINVAL (not a mount point) and ENOENT are
// success.
func (SystemMounter) Unmount(ctx context.Context, target string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := unix.Unmount(target, 0)
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return &os.PathError{Op: "unmount", Path: target, Err: err}
}

// IsMountPoint compares the device of path with its parent's: a tmpfs
// (any file system of its own) has its own device. It does not see a bind
// mount from the same file system, which this package never makes.
func (SystemMounter) IsMountPoint(ctx context.Context, path string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	d, err := device(path)
	if err != nil {
		return false, err
	}
	pd, err := device(filepath.Dir(filepath.Clean(path)))
	if err != nil {
		return false, err
	}
	return d != pd, nil
}

// device is the ID of the device holding path (not following a final
// symlink).
func device(path string) (uint64, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	return fileDevice(fi)
}

func fileDevice(fi os.FileInfo) (uint64, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("no device number for %s", fi.Name())
	}
	return uint64(st.Dev), nil //nolint:unconvert // Dev is not uint64 on every arch
}
