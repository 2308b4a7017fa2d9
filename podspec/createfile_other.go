//go:build !unix

package podspec

import "os"

// createFile opens path for writing with flag (os.O_CREATE, with os.O_EXCL
// or not; never truncating), writes data at its start, sets its mode to
// perm whatever the umask, and closes it.
func createFile(path string, flag int, perm os.FileMode, data []byte) error {
	f, err := os.OpenFile(path, flag|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
