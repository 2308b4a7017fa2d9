package staticpod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestUnknownFieldsWarn: unknown and duplicate fields do not reject the
// manifest, as the kubelet's decoder ignores them; every one of them is
// named in one warning for the file.
func TestUnknownFieldsWarn(t *testing.T) {
	dir := t.TempDir()
	content := strings.Replace(manifest("p", "img:1"), "kind: Pod\n", "kind: Pod\nbogusField: 1\n", 1) + "    imagge: x\n"
	path := writeFile(t, dir, "p.yaml", content)
	if _, err := ReadFile(path, node); err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	snap, err := ReadDir(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pods) != 1 || len(snap.Rejected) != 0 {
		t.Fatalf("%d pods, rejected %v; want the pod", len(snap.Pods), snap.Rejected)
	}
	if len(snap.Warnings) != 1 || snap.Warnings[0].File != path {
		t.Fatalf("warnings %+v; want one for %s", snap.Warnings, path)
	}
	for _, f := range []string{`"bogusField"`, `"spec.containers[0].imagge"`} {
		if !strings.Contains(snap.Warnings[0].Msg, f) {
			t.Errorf("warning %q does not name %s", snap.Warnings[0].Msg, f)
		}
	}
	clean := writeFile(t, t.TempDir(), "q.yaml", manifest("q", "img:1"))
	snap, _ = ReadDir(clean, node)
	if len(snap.Warnings) != 0 {
		t.Errorf("a clean manifest warns: %+v", snap.Warnings)
	}
}

// TestSkippedEntriesHaveReasons: hidden files, editor backups and
// subdirectories are not read, and each is reported with why.
func TestSkippedEntriesHaveReasons(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "web.yaml", manifest("web", "img:1"))
	writeFile(t, dir, ".hidden.yaml", manifest("h", "img:1"))
	writeFile(t, dir, "web.yaml~", manifest("b", "img:1"))
	writeFile(t, dir, ".web.yaml.swp", "binary")
	writeFile(t, dir, "#web.yaml#", manifest("a", "img:1"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub"), "x.yaml", manifest("x", "img:1"))
	snap, err := ReadDir(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pods) != 1 || snap.Pods[0].Name != "web-node-1" {
		t.Fatalf("pods %d; want web only", len(snap.Pods))
	}
	want := map[string]string{
		".hidden.yaml":  "hidden",
		".web.yaml.swp": "hidden",
		"web.yaml~":     "editor backup",
		"#web.yaml#":    "editor backup",
		"sub":           "directory",
	}
	got := map[string]string{}
	for _, s := range snap.Skipped {
		got[filepath.Base(s.File)] = s.Reason
	}
	for name, reason := range want {
		if !strings.Contains(got[name], reason) {
			t.Errorf("%s skipped with reason %q; want it to say %q", name, got[name], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("skipped %v; want %v", got, want)
	}
}

// TestSkippedEntriesLoggedAtDebug: the source logs each skipped entry once,
// at debug level, with its reason.
func TestSkippedEntriesLoggedAtDebug(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "web.yaml", manifest("web", "img:1"))
	writeFile(t, dir, "web.yaml~", manifest("web", "img:1"))
	core, logs := observer.New(zap.DebugLevel)
	src, err := New(Options{Dir: dir, NodeName: node, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 2 {
		if err := src.refresh(w, func(Snapshot) {}); err != nil {
			t.Fatal(err)
		}
	}
	got := logs.FilterMessage("not a static pod manifest; skipped").All()
	if len(got) != 1 {
		t.Fatalf("%d skip lines; want 1", len(got))
	}
	if got[0].Level != zap.DebugLevel || got[0].ContextMap()["file"] != filepath.Join(dir, "web.yaml~") ||
		!strings.Contains(got[0].ContextMap()["reason"].(string), "editor backup") {
		t.Errorf("skip line %v %v; want debug, the file and its reason", got[0].Level, got[0].ContextMap())
	}
}
