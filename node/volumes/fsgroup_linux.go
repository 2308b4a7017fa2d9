package volumes

import (
	"io/fs"
	"syscall"
)

// fileGID is the group of the file fi describes.
func fileGID(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st == nil {
		return 0, false
	}
	return st.Gid, true
}
