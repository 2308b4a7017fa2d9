package stats

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// HostFS reads the host this process runs on. Its zero value is ready to use.
type HostFS struct{}

var _ FS = HostFS{}

// ReadFile reads name from the host.
func (HostFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.ReadFile(name)
}

// ReadDirNames lists the directory name.
func (HostFS) ReadDirNames(ctx context.Context, name string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Statfs runs statfs(2) on path.
func (HostFS) Statfs(ctx context.Context, path string) (FsInfo, error) {
	if err := ctx.Err(); err != nil {
		return FsInfo{}, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return FsInfo{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	bs := uint64(st.Bsize)
	return FsInfo{
		CapacityBytes:  st.Blocks * bs,
		AvailableBytes: st.Bavail * bs,
		UsedBytes:      (st.Blocks - st.Bfree) * bs,
		Inodes:         st.Files,
		InodesFree:     st.Ffree,
	}, nil
}

// DiskUsage walks path like du -x: allocated blocks and one inode per entry (hard links
// counted once). It stops early when ctx ends.
func (HostFS) DiskUsage(ctx context.Context, path string) (bytes, inodes uint64, err error) {
	var root unix.Stat_t
	if err := unix.Lstat(path, &root); err != nil {
		return 0, 0, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	type inode struct{ dev, ino uint64 }
	seen := make(map[inode]bool)
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // removed while walking
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if err == unix.ENOENT {
				return nil
			}
			return &os.PathError{Op: "lstat", Path: p, Err: err}
		}
		if uint64(st.Dev) != uint64(root.Dev) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		k := inode{uint64(st.Dev), uint64(st.Ino)}
		if st.Nlink > 1 && seen[k] {
			return nil
		}
		seen[k] = true
		bytes += uint64(st.Blocks) * 512
		inodes++
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("disk usage of %s: %w", path, err)
	}
	return bytes, inodes, nil
}
