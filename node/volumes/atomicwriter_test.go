package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAtomicWriterCleansCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := writeAtomic(dir, payload{"a": {data: []byte("1"), mode: 0o644}}, now, nil); err != nil {
		t.Fatal(err)
	}
	// A write interrupted after its data dir and ..data_tmp were made.
	stale := filepath.Join(dir, "..2024_01_01_00_00_01.999")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(stale), filepath.Join(dir, newDataDirName)); err != nil {
		t.Fatal(err)
	}
	written, err := writeAtomic(dir, payload{"a": {data: []byte("2"), mode: 0o644}}, now.Add(time.Second), nil)
	if err != nil || !written {
		t.Fatalf("write = %v, %v", written, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // ..<ts>, ..data, a
		t.Errorf("entries = %v, want the data dir, ..data and a", names)
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "2" {
		t.Errorf("a = %q", got)
	}
}

func TestAtomicWriterModeChangeRewrites(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if _, err := writeAtomic(dir, payload{"a": {data: []byte("1"), mode: 0o644}}, now, nil); err != nil {
		t.Fatal(err)
	}
	written, err := writeAtomic(dir, payload{"a": {data: []byte("1"), mode: 0o600}}, now, nil)
	if err != nil || !written {
		t.Fatalf("mode change: written = %v, %v", written, err)
	}
	if p := perm(t, filepath.Join(dir, "a")); p != 0o600 {
		t.Errorf("mode = %o", p)
	}
}

func TestAtomicWriterRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", "/etc/passwd", "../x", "a/../../x", "..data", "..x/y", "."} {
		_, err := writeAtomic(t.TempDir(), payload{p: {data: []byte("x"), mode: 0o644}}, time.Now(), nil)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("path %q: err = %v, want ErrInvalid", p, err)
		}
	}
}
