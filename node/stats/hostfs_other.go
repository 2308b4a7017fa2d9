//go:build !linux

package stats

import (
	"context"
	"errors"
	"os"
)

// HostFS reads the host this process runs on; off Linux it has only files and directories.
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

// Statfs is unsupported off Linux.
func (HostFS) Statfs(context.Context, string) (FsInfo, error) { return FsInfo{}, errors.ErrUnsupported }

// DiskUsage is unsupported off Linux.
func (HostFS) DiskUsage(context.Context, string) (uint64, uint64, error) {
	return 0, 0, errors.ErrUnsupported
}
