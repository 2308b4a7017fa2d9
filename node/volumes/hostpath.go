package volumes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// setUpHostPath checks a hostPath against its type, as the kubelet does,
// and returns the path (cleaned):
//
//	""                 no check
//	DirectoryOrCreate  a directory, made (0755, parents too) if nothing is there
//	Directory          a directory
//	FileOrCreate       not a directory; an empty 0644 file is made if nothing is there (not its parents)
//	File               something that is not a directory (the kubelet's check)
//	Socket             a unix socket
//	CharDevice         a character device
//	BlockDevice        a block device
//
// Symlinks are followed. Nothing there is ErrNotFound; something of another
// type is ErrInvalid.
func setUpHostPath(hp *corev1.HostPathVolumeSource) (string, error) {
	if !filepath.IsAbs(hp.Path) {
		return "", errorf(ErrInvalid, "hostPath %q must be an absolute path", hp.Path)
	}
	path := filepath.Clean(hp.Path)
	typ := corev1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	fi, err := os.Stat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", errorf(ErrInvalid, "hostPath type check failed: %v", err)
	}
	var is bool
	var what string
	switch typ {
	case corev1.HostPathUnset:
		return path, nil
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return "", errorf(ErrInvalid, "hostPath type check failed: create directory: %v", err)
			}
			return path, os.Chmod(path, 0o755)
		}
		is, what = fi.IsDir(), "a directory"
	case corev1.HostPathDirectory:
		is, what = exists && fi.IsDir(), "a directory"
	case corev1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return "", errorf(ErrInvalid, "hostPath type check failed: create file: %v", err)
			}
			if err := f.Close(); err != nil {
				return "", err
			}
			return path, os.Chmod(path, 0o644)
		}
		is, what = !fi.IsDir(), "a file"
	case corev1.HostPathFile:
		is, what = exists && !fi.IsDir(), "a file"
	case corev1.HostPathSocket:
		is, what = exists && fi.Mode()&os.ModeSocket != 0, "a socket file"
	case corev1.HostPathCharDev:
		is, what = exists && fi.Mode()&os.ModeCharDevice != 0, "a character device"
	case corev1.HostPathBlockDev:
		is, what = exists && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0, "a block device"
	default:
		return "", errorf(ErrInvalid, "hostPath type %q is invalid", typ)
	}
	if is {
		return path, nil
	}
	kind := ErrInvalid
	if !exists {
		kind = ErrNotFound
	}
	return "", errorf(kind, "hostPath type check failed: %s is not %s", path, what)
}
