package imagegc

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"
)

// CapacityFunc returns the size in bytes of the filesystem mounted at
// mountpoint. The runtime's ImageFsInfo reports used bytes but no capacity.
type CapacityFunc func(ctx context.Context, mountpoint string) (uint64, error)

// StatfsCapacity is the CapacityFunc of a real node: statfs(2) of mountpoint,
// total blocks times the fragment size.
func StatfsCapacity(ctx context.Context, mountpoint string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(mountpoint, &st); err != nil {
		return 0, fmt.Errorf("statfs %q: %w", mountpoint, err)
	}
	frsize := uint64(st.Frsize) //nolint:unconvert // int64 on some platforms
	if frsize == 0 {
		frsize = uint64(st.Bsize) //nolint:unconvert
	}
	return st.Blocks * frsize, nil
}
