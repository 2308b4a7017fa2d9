package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// removeAllOneFS removes root and everything under it, like os.RemoveAll,
// but never descends into a directory on another file system than root's
// (a mount point): it fails there instead, so that removing a pod's
// directory can never delete what a mount exposes.
func removeAllOneFS(root string) error {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dev, err := fileDevice(fi)
	if err != nil {
		return err
	}
	return removeTree(root, fi, dev)
}

func removeTree(path string, fi os.FileInfo, dev uint64) error {
	if fi.IsDir() {
		d, err := fileDevice(fi)
		if err != nil {
			return err
		}
		if d != dev {
			return fmt.Errorf("refusing to remove %s: another file system is mounted there", path)
		}
		entries, err := os.ReadDir(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		var errs []error
		for _, e := range entries {
			child := filepath.Join(path, e.Name())
			cfi, err := os.Lstat(child)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil {
				err = removeTree(child, cfi, dev)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
