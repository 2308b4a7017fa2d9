// Command mkimage writes a single-layer container image as a docker-archive
// tarball (manifest.json, the config as <sha256>.json, an uncompressed
// layer.tar) that `ctr images import` takes, so the end-to-end tests need no
// registry. Output is deterministic: same files, same image ID.
//
//	mkimage -ref localhost/actorlet/pause:1.0 -out pause.tar -entrypoint /pause /pause=./bin/pause
//
// Each argument is IMAGEPATH=HOSTFILE (mode 0755). The layer also holds /tmp
// (1777), /etc, /proc, /sys, /dev, /etc/passwd and /etc/group (root and nobody).
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
	flag.Parse()
	if err := run(*ref, *out, *entry, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

type entry struct {
	mode int64
	data []byte // nil for a directory
}

func run(ref, out, entrypoint string, args []string) error {
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
	layer, err := tarball(files)
	if err != nil {
		return err
	}
	diffID := digest(layer)
	config := map[string]any{
		"architecture": "amd64", "os": "linux", "created": time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Entrypoint": splitNonEmpty(entrypoint),
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
		h := &tar.Header{Name: n, Mode: e.mode, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if strings.HasSuffix(n, "/") {
			h.Typeflag, h.Size = tar.TypeDir, 0
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
