package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestRootfsImage builds an image from a tree holding a setuid file, a
// symbolic link and a sticky directory, and reads back the layer and config.
func TestRootfsImage(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "scratch"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), []byte("#!"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "bin/busybox"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "scratch"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("busybox", filepath.Join(root, "bin/sh")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	opts := options{cmd: "sh", user: "1234", rootfs: root}
	if err := run("example.com/busybox:1", out, "", opts, nil); err != nil {
		t.Fatal(err)
	}
	archive := readTar(t, mustRead(t, out))
	var manifest []struct{ Config string }
	if err := json.Unmarshal(archive["manifest.json"].data, &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config struct {
			Cmd  []string
			User string
		}
	}
	if err := json.Unmarshal(archive[manifest[0].Config].data, &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Config.Cmd) != 1 || config.Config.Cmd[0] != "sh" || config.Config.User != "1234" {
		t.Errorf("config = %+v, want Cmd [sh] User 1234", config.Config)
	}
	layer := readTar(t, archive["layer.tar"].data)
	if h := layer["bin/busybox"].h; h == nil || h.Mode != 0o4755 {
		t.Errorf("bin/busybox = %+v, want mode 04755", h)
	}
	if h := layer["bin/sh"].h; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("bin/sh = %+v, want a symlink to busybox", h)
	}
	if h := layer["scratch/"].h; h == nil || h.Mode != 0o1777 {
		t.Errorf("scratch/ = %+v, want mode 01777", h)
	}
	if h := layer["etc/passwd"].h; h == nil {
		t.Error("etc/passwd missing: the defaults stay under a -rootfs")
	}
}

func TestRootfsRejectsFifo(t *testing.T) {
	root := t.TempDir()
	if err := mkfifo(filepath.Join(root, "pipe")); err != nil {
		t.Skip("mkfifo:", err)
	}
	err := run("example.com/x:1", filepath.Join(t.TempDir(), "x.tar"), "", options{rootfs: root}, nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("pipe")) {
		t.Fatalf("err = %v, want one naming the fifo", err)
	}
}

type tarEntry struct {
	h    *tar.Header
	data []byte
}

func readTar(t *testing.T, b []byte) map[string]tarEntry {
	t.Helper()
	out := map[string]tarEntry{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = tarEntry{h: h, data: data}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
