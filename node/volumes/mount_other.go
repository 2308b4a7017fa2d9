//go:build !linux

package volumes

import (
	"context"
	"errors"
	"os"
)

// SystemMounter is the Mounter of the host; on this OS it mounts nothing.
type SystemMounter struct{}

var errNoMount = errors.New("tmpfs mounts need Linux")

func (SystemMounter) MountTmpfs(context.Context, string, int64) error { return errNoMount }
func (SystemMounter) Unmount(context.Context, string) error           { return nil }
func (SystemMounter) IsMountPoint(context.Context, string) (bool, error) {
	return false, nil
}

func fileDevice(os.FileInfo) (uint64, error) { return 0, nil }
