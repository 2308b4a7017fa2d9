// Command mkimage writes a single-layer container image as a docker-archive
// tarball (manifest.json, the config as <sha256>.json, an uncompressed
// layer.tar) that `ctr images import` takes, so the end-to-end tests need no
// registry. Output is deterministic: same files, same image ID.
//
//	mkimage -ref localhost/actorlet/pause:1.0 -out pause.tar -entrypoint /pause /pause=./bin/pause
//
// Each argument is IMAGEPATH=HOSTFILE (mode 0755). The layer also holds /tmp
// (1777), /etc, /proc, /sys, /dev, /etc/passwd and /etc/group (root and nobody).
//
// -rootfs DIR adds a whole host directory tree (directories, regular files and
// symbolic links, with their modes; owned by root unless the file's uid/gid is
// kept with -keep-owner) over those defaults; -cmd and -user set the image's Cmd and
// User (the conformance suite's busybox, agnhost and nonroot images:
// test/conformance/images.sh).
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

func main() {
	ref := flag.String("ref", "", "image reference, e.g. localhost/actorlet/pause:1.0")
	out := flag.String("out", "", "tarball to write")
	entry := flag.String("entrypoint", "", "entrypoint, comma separated")
	cmd := flag.String("cmd", "", "cmd, comma separated")
	user := flag.String("user", "", "user (uid[:gid]) the image runs as")
	rootfs := flag.String("rootfs", "", "a directory tree to add to the layer")
	keepOwner := flag.Bool("keep-owner", false, "keep the uid and gid of the -rootfs files (default root)")
	flag.Parse()
	opts := options{cmd: *cmd, user: *user, rootfs: *rootfs, keepOwner: *keepOwner}
	if err := run(*ref, *out, *entry, opts, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

type entry struct {
	mode     int64
	data     []byte // nil for a directory
	link     string // the target of a symbolic link
	uid, gid int
}

// options are the image settings beyond the entrypoint and the files.
type options struct {
	cmd, user, rootfs string
	keepOwner         bool
}

func run(ref, out, entrypoint string, opts options, args []string) error {
	if ref == "" || out == "" {
		return fmt.Errorf("-ref and -out are required")
	}
	files := map[string]entry{
		"tmp/": {mode: 0o1777}, "etc/": {mode: 0o755}, "proc/": {mode: 0o755}, "sys/": {mode: 0o755}, "dev/": {mode: 0o755},
		"etc/passwd": {mode: 0o644, data: []byte("root:x:0:0:root:/:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n")},
		"etc/group":  {mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\n")},
	}
	for _, a := range args {
		dst, src, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("argument %q is not IMAGEPATH=HOSTFILE", a)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst = strings.TrimPrefix(path.Clean("/"+dst), "/")
		for d := path.Dir(dst); d != "."; d = path.Dir(d) {
			if _, ok := files[d+"/"]; !ok {
				files[d+"/"] = entry{mode: 0o755}
			}
		}
		files[dst] = entry{mode: 0o755, data: data}
	}
	if opts.rootfs != "" {
		if err := addTree(files, opts.rootfs, opts.keepOwner); err != nil {
			return err
		}
	}
	layer, err := tarball(files)
	if err != nil {
		return err
	}
	diffID := digest(layer)
	config := map[string]any{
		"architecture": "amd64", "os": "linux", "created": time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": splitNonEmpty(entrypoint),
			"Cmd":        splitNonEmpty(opts.cmd),
			"User":       opts.user,
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"WorkingDir": "/",
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + diffID}},
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return err
	}
	configName := digest(configJSON) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{ref}, "Layers": []string{"layer.tar"}}})
	if err != nil {
		return err
	}
	archive, err := tarball(map[string]entry{
		"manifest.json": {mode: 0o644, data: manifest},
		configName:      {mode: 0o644, data: configJSON},
		"layer.tar":     {mode: 0o644, data: layer},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(out, archive, 0o644)
}

// tarball writes the entries sorted by name, owned by root, dated 1970.
func tarball(files map[string]entry) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := files[n]
		h := &tar.Header{Name: n, Mode: e.mode, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data)),
			Uid: e.uid, Gid: e.gid}
		switch {
		case strings.HasSuffix(n, "/"):
			h.Typeflag, h.Size = tar.TypeDir, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
