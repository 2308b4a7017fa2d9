package stats

import (
	"context"
)

// FS is the part of the host the node figures are read from. Names are absolute host paths
// (/proc/stat, /sys/fs/cgroup/...). HostFS is the real one; tests give fixed content.
type FS interface {
	// ReadFile returns the content of a file.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// ReadDirNames returns the names of the entries of a directory, in any order.
	ReadDirNames(ctx context.Context, name string) ([]string, error)
	// Statfs describes the filesystem that holds path.
	Statfs(ctx context.Context, path string) (FsInfo, error)
	// DiskUsage is the space (allocated blocks) and inodes used by the tree at path, which
	// it does not leave for other filesystems.
	DiskUsage(ctx context.Context, path string) (bytes, inodes uint64, err error)
}

// FsInfo is a filesystem's size, as statfs(2) reports it.
type FsInfo struct {
	CapacityBytes  uint64 // blocks × block size
	AvailableBytes uint64 // blocks available to unprivileged users
	UsedBytes      uint64 // blocks in use
	Inodes         uint64
	InodesFree     uint64
}
