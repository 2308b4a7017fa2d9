//go:build unix

package podspec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// createFile writes a new file with its mode set whatever the umask, keeps
// an existing one as it is (without O_EXCL), and reports an existing
// (with O_EXCL) or unreachable one as the os package would.
func TestCreateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := createFile(path, os.O_CREATE|os.O_EXCL, 0o666, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("stat = %v, %v; want mode 0666", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Errorf("contents %q, want hello", b)
	}
	if err := createFile(path, os.O_CREATE, 0o666, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Errorf("an existing file was changed: %q", b)
	}
	err = createFile(path, os.O_CREATE|os.O_EXCL, 0o644, []byte("x"))
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("O_EXCL on an existing file: %v, want a *fs.PathError for ErrExist", err)
	}
	if err := createFile(filepath.Join(dir, "missing", "f"), os.O_CREATE, 0o666, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("in a missing directory: %v, want ErrNotExist", err)
	}
}

// A file is made with the bare system calls: nothing allocated but the
// path's C string, where an os.File (with its poller registration and
// cleanup) cost several allocations and five more system calls.
func TestCreateFileAllocatesOnlyThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	allocs := testing.AllocsPerRun(100, func() {
		if err := createFile(path, os.O_CREATE, 0o666, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("createFile allocated %.0f times, want at most 1 (the path)", allocs)
	}
}
