package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// addTree adds every directory, regular file and symbolic link under dir to
// files (the image path is the path relative to dir), replacing entries of the
// same path. Modes (with setuid, setgid and sticky bits) are kept; owners only
// with keepOwner. Other file types (devices, sockets, fifos) are an error.
func addTree(files map[string]entry, dir string, keepOwner bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{mode: int64(info.Mode().Perm())}
		if info.Mode()&fs.ModeSetuid != 0 {
			e.mode |= 0o4000
		}
		if info.Mode()&fs.ModeSetgid != 0 {
			e.mode |= 0o2000
		}
		if info.Mode()&fs.ModeSticky != 0 {
			e.mode |= 0o1000
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && keepOwner {
			e.uid, e.gid = int(st.Uid), int(st.Gid)
		}
		name := filepath.ToSlash(rel)
		switch {
		case info.IsDir():
			files[name+"/"] = e
		case info.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
			e.mode = 0o777
			files[name] = e
		case info.Mode().IsRegular():
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
			files[name] = e
		default:
			return fmt.Errorf("-rootfs %s: %s is a %s, not a directory, regular file or symbolic link", dir, rel, info.Mode().Type())
		}
		return nil
	})
}
