package volumes

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHostPathTypes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name string
		path string
		typ  corev1.HostPathType
		kind error // nil: ok
		msg  string
	}{
		{"unset missing", missing, corev1.HostPathUnset, nil, ""},
		{"dir", dir, corev1.HostPathDirectory, nil, ""},
		{"dir on file", file, corev1.HostPathDirectory, ErrInvalid, "hostPath type check failed: " + file + " is not a directory"},
		{"dir missing", missing, corev1.HostPathDirectory, ErrNotFound, "is not a directory"},
		{"file", file, corev1.HostPathFile, nil, ""},
		{"file on dir", dir, corev1.HostPathFile, ErrInvalid, "is not a file"},
		{"file missing", missing, corev1.HostPathFile, ErrNotFound, "is not a file"},
		{"socket", sock, corev1.HostPathSocket, nil, ""},
		{"socket on file", file, corev1.HostPathSocket, ErrInvalid, "is not a socket file"},
		{"char on file", file, corev1.HostPathCharDev, ErrInvalid, "is not a character device"},
		{"block on file", file, corev1.HostPathBlockDev, ErrInvalid, "is not a block device"},
		{"bad type", dir, corev1.HostPathType("Weird"), ErrInvalid, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: tc.path, Type: &tc.typ})
			if tc.kind == nil {
				if err != nil || got != tc.path {
					t.Fatalf("= %q, %v; want %q", got, err, tc.path)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}

func TestHostPathOrCreate(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "a", "b")
	typ := corev1.HostPathDirectoryOrCreate
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: d, Type: &typ}); err != nil {
		t.Fatal(err)
	}
	if p := perm(t, d); p != 0o755 {
		t.Errorf("created directory mode = %o, want 755", p)
	}
	f := filepath.Join(dir, "a", "f")
	typ = corev1.HostPathFileOrCreate
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: f, Type: &typ}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || fi.Size() != 0 {
		t.Errorf("created file = %v, %v; want an empty 0644 file", fi, err)
	}
	// Existing of the other kind.
	typ = corev1.HostPathDirectoryOrCreate
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: f, Type: &typ}); !errors.Is(err, ErrInvalid) {
		t.Errorf("DirectoryOrCreate on a file: err = %v, want ErrInvalid", err)
	}
	typ = corev1.HostPathFileOrCreate
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: d, Type: &typ}); !errors.Is(err, ErrInvalid) {
		t.Errorf("FileOrCreate on a directory: err = %v, want ErrInvalid", err)
	}
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: "rel/path"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("relative path: err = %v, want ErrInvalid", err)
	}
}
