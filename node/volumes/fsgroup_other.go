//go:build !linux

package volumes

import "io/fs"

// fileGID: unknown off Linux, so fsGroup ownership is always applied.
func fileGID(fs.FileInfo) (uint32, bool) { return 0, false }
