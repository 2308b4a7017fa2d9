package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The names the atomic writer keeps in a volume directory (the kubelet's).
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	// tsDirLayout names the timestamped data directories (UTC); MkdirTemp
	// appends a random suffix.
	tsDirLayout = "..2006_01_02_15_04_05."
)

// file is one file of a payload.
type file struct {
	data []byte
	mode os.FileMode
}

// payload is the contents of a volume: relative path → file.
type payload map[string]file

// writeAtomic makes dir hold exactly p, as described in the package doc
// ("Files of ..."), and reports whether it wrote a new version. dir must
// exist. On error, readers still see the previous version in full.
// setPerms, when not nil, runs once a new version is written and before it
// is published (the kubelet's setPerms: the fsGroup's ownership).
func writeAtomic(dir string, p payload, now time.Time, setPerms func()) (bool, error) {
	clean := make(payload, len(p))
	for path, f := range p {
		c, err := cleanPayloadPath(path)
		if err != nil {
			return false, err
		}
		clean[c] = f
	}
	oldTs, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if strings.Contains(oldTs, "/") {
		return false, fmt.Errorf("%s/%s points out of the volume: %q", dir, dataDirName, oldTs)
	}
	write := true
	if oldTs != "" {
		same, err := sameContents(filepath.Join(dir, oldTs), clean)
		if err != nil {
			return false, err
		}
		write = !same
	}
	current := oldTs
	if write {
		tsDir, err := os.MkdirTemp(dir, now.UTC().Format(tsDirLayout))
		if err != nil {
			return false, err
		}
		if err := os.Chmod(tsDir, 0o755); err != nil {
			return false, err
		}
		if err := writeFiles(tsDir, clean); err != nil {
			_ = os.RemoveAll(tsDir)
			return false, err
		}
		if setPerms != nil {
			setPerms()
		}
		tmp := filepath.Join(dir, newDataDirName)
		if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
		current = filepath.Base(tsDir)
		if err := os.Symlink(current, tmp); err != nil {
			_ = os.RemoveAll(tsDir)
			return false, err
		}
		if err := os.Rename(tmp, filepath.Join(dir, dataDirName)); err != nil {
			_ = os.RemoveAll(tsDir)
			return false, err
		}
	}
	if err := syncVisible(dir, clean); err != nil {
		return write, err
	}
	return write, removeStale(dir, current)
}

// cleanPayloadPath validates a payload path as the kubelet does: relative,
// not empty, no ".." element, not starting with "..", and cleans it.
func cleanPayloadPath(path string) (string, error) {
	switch {
	case path == "":
		return "", errorf(ErrInvalid, "invalid path: must not be empty")
	case len(path) > 4096:
		return "", errorf(ErrInvalid, "invalid path %q: must be less than or equal to 4096 characters", path)
	case filepath.IsAbs(path):
		return "", errorf(ErrInvalid, "invalid path %q: must be relative path", path)
	case strings.HasPrefix(path, ".."):
		return "", errorf(ErrInvalid, "invalid path %q: must not start with '..'", path)
	}
	for _, el := range strings.Split(path, "/") {
		if el == ".." {
			return "", errorf(ErrInvalid, "invalid path %q: must not contain '..'", path)
		}
		if len(el) > 255 {
			return "", errorf(ErrInvalid, "invalid path %q: each element must be less than or equal to 255 characters", path)
		}
	}
	c := filepath.Clean(path)
	if c == "." {
		return "", errorf(ErrInvalid, "invalid path %q: must name a file", path)
	}
	return c, nil
}

// sameContents reports whether the data directory ts holds exactly p:
// the same regular files with the same contents and permissions.
func sameContents(ts string, p payload) (bool, error) {
	seen := 0
	same := true
	err := filepath.WalkDir(ts, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(ts, path)
		if err != nil {
			return err
		}
		f, ok := p[rel]
		if !ok || !d.Type().IsRegular() {
			same = false
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != f.mode.Perm() {
			same = false
			return filepath.SkipAll
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, f.data) {
			same = false
			return filepath.SkipAll
		}
		seen++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // ..data dangles: write anew
	}
	if err != nil {
		return false, err
	}
	return same && seen == len(p), nil
}

// writeFiles writes p into the new directory ts, directories 0755 and
// files with their modes whatever the umask.
func writeFiles(ts string, p payload) error {
	for path, f := range p {
		full := filepath.Join(ts, path)
		if parent := filepath.Dir(full); parent != ts {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return err
			}
			for d := parent; d != ts; d = filepath.Dir(d) {
				if err := os.Chmod(d, 0o755); err != nil {
					return err
				}
			}
		}
		if err := os.WriteFile(full, f.data, f.mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(full, f.mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// syncVisible makes the user-visible entries of dir one symlink
// <top> -> ..data/<top> per top-level path element of p, and removes the
// symlinks of elements p no longer has.
func syncVisible(dir string, p payload) error {
	tops := map[string]bool{}
	for path := range p {
		top, _, _ := strings.Cut(path, "/")
		tops[top] = true
	}
	for top := range tops {
		link := filepath.Join(dir, top)
		if _, err := os.Lstat(link); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Symlink(filepath.Join(dataDirName, top), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || tops[name] || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// removeStale removes the data directories of dir other than current, and
// a leftover ..data_tmp: older versions, and what a crash left behind.
func removeStale(dir, current string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == dataDirName || name == current || !strings.HasPrefix(name, ".."):
		case name == newDataDirName || e.IsDir():
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
