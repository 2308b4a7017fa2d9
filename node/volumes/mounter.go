package volumes

import "context"

// Mounter mounts and unmounts the tmpfs file systems of memory-backed
// volumes. Paths are host paths of existing directories.
type Mounter interface {
	// MountTmpfs mounts a new tmpfs (nosuid, nodev) on target, of at most
	// sizeBytes (0: the kernel's default, half the RAM).
	MountTmpfs(ctx context.Context, target string, sizeBytes int64) error
	// Unmount unmounts what is mounted on target; nothing mounted there is
	// not an error.
	Unmount(ctx context.Context, target string) error
	// IsMountPoint reports whether a file system is mounted on path.
	IsMountPoint(ctx context.Context, path string) (bool, error)
}
