//go:build unix

package podspec

import (
	"io/fs"
	"os"
	"syscall"
)

// createFile opens path for writing with flag (os.O_CREATE, with os.O_EXCL
// or not; never truncating), writes data at its start, sets its mode to
// perm whatever the umask, and closes it, with the bare system calls: four
// at most (open, write, fchmod, close). os.OpenFile would add five for a
// regular file on Linux: it makes the descriptor non-blocking (two
// fcntl), fails to register it with the network poller (epoll_ctl), and
// makes it blocking again (two fcntl), and allocates an os.File with a
// cleanup; with two files per new container that was about 2 % of a
// starting node's CPU. Errors are *fs.PathError, as the os package's.
func createFile(path string, flag int, perm os.FileMode, data []byte) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, flag|syscall.O_WRONLY|syscall.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	op := "write"
	for len(data) > 0 && err == nil {
		var n int
		if n, err = syscall.Write(fd, data); err == nil {
			data = data[n:]
		} else if err == syscall.EINTR {
			err = nil
		}
	}
	if err == nil {
		op, err = "chmod", retryEINTR(func() error { return syscall.Fchmod(fd, uint32(perm.Perm())) })
	}
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		op, err = "close", cerr
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

// retryEINTR calls f until it fails with another error than EINTR.
func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
