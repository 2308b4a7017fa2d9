package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// The bits the kubelet's SetVolumeOwnership adds for the fsGroup
// (k8s.io/kubernetes pkg/volume/volume_linux.go): group read-write on a
// writable volume, group read on a read-only one (configMap, secret,
// downwardAPI, projected), group search and setgid on directories.
const (
	groupRW   os.FileMode = 0o660
	groupRO   os.FileMode = 0o440
	groupExec os.FileMode = 0o110
)

// podFSGroup is the pod's spec.securityContext.fsGroup, or nil.
func podFSGroup(pod *corev1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// fsGroupMode is the mode a file of mode m gets from the fsGroup: the
// group bits of the mask added, as the kubelet adds them.
func fsGroupMode(m os.FileMode, readOnly bool) os.FileMode {
	if readOnly {
		return m | groupRO
	}
	return m | groupRW
}

// setVolumeOwnership gives everything under dir, dir included, the group
// gid, as the kubelet's SetVolumeOwnership does: every entry is chowned
// (symlinks themselves, not their targets, the owner kept), regular files
// get the group bits of fsGroupMode, and directories also group search and
// the setgid bit, so that files made later in them inherit the group. The
// root is changed last: once it has the group and the bits, the whole tree
// had them (see fsGroupApplied), so a walk interrupted by a crash is
// simply done again.
//
// As the kubelet, it goes on past an entry it cannot change, and returns
// the first such error (for the caller to log) once the walk is done; an
// error listing a directory stops the walk.
func setVolumeOwnership(dir string, gid int64, readOnly bool) error {
	var first error
	failed := func(err error) {
		if first == nil {
			first = err
		}
	}
	err := walkDeep(dir, func(path string, fi fs.FileInfo) error {
		if err := os.Lchown(path, -1, int(gid)); err != nil {
			failed(fmt.Errorf("set group %d of %s: %w", gid, path, err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		mode := fsGroupMode(fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), readOnly)
		if fi.IsDir() {
			mode |= groupExec | fs.ModeSetgid
		}
		if err := os.Chmod(path, mode); err != nil {
			failed(fmt.Errorf("set mode of %s for fsGroup %d: %w", path, gid, err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set fsGroup %d on %s: %w", gid, dir, err)
	}
	return first
}

// fsGroupApplied reports whether the directory dir already has the group
// gid and the bits setVolumeOwnership gives it: the kubelet's test for
// fsGroupChangePolicy OnRootMismatch (requiresPermissionChange).
func fsGroupApplied(dir string, gid int64, readOnly bool) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	g, ok := fileGID(fi)
	if !ok || int64(g) != gid {
		return false
	}
	want := fsGroupMode(groupExec, readOnly)
	return fi.Mode().Perm()&want == want && fi.Mode()&fs.ModeSetgid != 0
}

// walkDeep calls fn for everything under root, children before their
// directory, root last; symlinks are not followed. An entry that vanished
// meanwhile is skipped.
func walkDeep(root string, fn func(path string, fi fs.FileInfo) error) error {
	fi, err := os.Lstat(root)
	if err != nil {
		return err
	}
	return walkEntry(root, fi, fn)
}

func walkEntry(path string, fi fs.FileInfo, fn func(string, fs.FileInfo) error) error {
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			child := filepath.Join(path, e.Name())
			cfi, err := os.Lstat(child)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if err := walkEntry(child, cfi, fn); err != nil {
				return err
			}
		}
	}
	return fn(path, fi)
}
