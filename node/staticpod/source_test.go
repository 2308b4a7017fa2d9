package staticpod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// recorder collects the snapshots a Source delivers.
type recorder struct {
	mu    sync.Mutex
	snaps []Snapshot
}

func (r *recorder) sink(s Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snaps = append(r.snaps, s)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.snaps)
}

func (r *recorder) last() (Snapshot, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.snaps) == 0 {
		return Snapshot{}, false
	}
	return r.snaps[len(r.snaps)-1], true
}

// waitFor polls until the last delivered snapshot satisfies cond, calling
// step (if not nil) on every round, and fails the test after a deadline.
func (r *recorder) waitFor(t *testing.T, what string, cond func(Snapshot) bool, step func()) Snapshot {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, ok := r.last(); ok && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			s, _ := r.last()
			t.Fatalf("timed out waiting for %s; last snapshot: %s", what, describe(s))
		}
		if step != nil {
			step()
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not a wait for an event
	}
}

func describe(s Snapshot) string {
	out := "pods=["
	for _, p := range s.Pods {
		out += p.Name + "(" + string(p.UID)[:8] + ") "
	}
	out += "] rejected=["
	for _, r := range s.Rejected {
		out += r.Err.Error() + "; "
	}
	return out + "]"
}

func podNames(s Snapshot) []string {
	var names []string
	for _, p := range s.Pods {
		names = append(names, p.Name)
	}
	return names
}

func hasPods(names ...string) func(Snapshot) bool {
	return func(s Snapshot) bool { return slices.Equal(podNames(s), names) && len(s.Rejected) == 0 }
}

func podByName(s Snapshot, name string) *corev1.Pod {
	for _, p := range s.Pods {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// run starts src.Run and stops it, checking its result, when the test ends.
func run(t *testing.T, src *Source, rec *recorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, rec.sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
	rec.waitFor(t, "the initial snapshot", func(Snapshot) bool { return true }, nil)
}

func TestNewChecksOptions(t *testing.T) {
	if _, err := New(Options{NodeName: node}); err == nil {
		t.Error("New accepted an empty Dir")
	}
	if _, err := New(Options{Dir: t.TempDir()}); !errors.Is(err, ErrNoNodeName) {
		t.Errorf("New without node name: %v", err)
	}
}

func TestRunDeliversInitialSnapshotBeforeWaiting(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", manifest("a", "img:1"))
	src, err := New(Options{Dir: dir, NodeName: node})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run must still read once and deliver before it notices.
	var rec recorder
	if err := src.Run(ctx, rec.sink); err != nil {
		t.Fatal(err)
	}
	if s, _ := rec.last(); rec.count() != 1 || !hasPods("a-node-1")(s) {
		t.Errorf("%d deliveries, last %s; want exactly the initial one with a-node-1", rec.count(), describe(s))
	}
}

func TestRunFollowsFileChanges(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", manifest("a", "img:1"))
	src, err := New(Options{Dir: dir, NodeName: node, Settle: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	run(t, src, &rec)
	first := rec.waitFor(t, "a", hasPods("a-node-1"), nil)
	uidA := first.Pods[0].UID

	writeFile(t, dir, "b.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"img:1"}]}}`)
	s := rec.waitFor(t, "a and b", hasPods("a-node-1", "b-node-1"), nil)
	if s.Pods[0].UID != uidA {
		t.Errorf("unchanged a.yaml changed UID: %s -> %s", uidA, s.Pods[0].UID)
	}
	seenB := s.Pods[1].Annotations[AnnotationConfigSeen]

	writeFile(t, dir, "a.yaml", manifest("a", "img:2"))
	s = rec.waitFor(t, "a replaced", func(s Snapshot) bool {
		return hasPods("a-node-1", "b-node-1")(s) && s.Pods[0].UID != uidA
	}, nil)
	if s.Pods[0].Spec.Containers[0].Image != "img:2" {
		t.Errorf("a's image = %s, want img:2", s.Pods[0].Spec.Containers[0].Image)
	}
	if got := s.Pods[1].Annotations[AnnotationConfigSeen]; got != seenB {
		t.Errorf("b's seen time moved from %s to %s though b did not change", seenB, got)
	}

	if err := os.Remove(filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "b removed", hasPods("a-node-1"), nil)

	// Renaming a file in (as editors and kubeadm do) counts too.
	tmp := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(tmp, []byte(manifest("c", "img:1")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "c moved in", hasPods("a-node-1", "c-node-1"), nil)
}

func TestRunRejectsInvalidManifestKeepsValid(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", manifest("a", "img:1"))
	writeFile(t, dir, "b.yaml", manifest("b", `""`))
	src, err := New(Options{Dir: dir, NodeName: node, Settle: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	run(t, src, &rec)
	s, _ := rec.last()
	if !slices.Equal(podNames(s), []string{"a-node-1"}) || len(s.Rejected) != 1 ||
		s.Rejected[0].File != filepath.Join(dir, "b.yaml") || !errors.Is(s.Rejected[0].Err, ErrInvalid) {
		t.Fatalf("initial snapshot %s; want a-node-1 and b.yaml rejected as invalid", describe(s))
	}

	writeFile(t, dir, "b.yaml", manifest("b", "img:1"))
	rec.waitFor(t, "b fixed", hasPods("a-node-1", "b-node-1"), nil)

	// A half-written file is a rejection until the rest arrives.
	full := manifest("a", "img:3")
	writeFile(t, dir, "a.yaml", full[:len(full)/2])
	rec.waitFor(t, "a half-written", func(s Snapshot) bool {
		return slices.Equal(podNames(s), []string{"b-node-1"}) && len(s.Rejected) == 1 && s.Rejected[0].File == filepath.Join(dir, "a.yaml")
	}, nil)
	writeFile(t, dir, "a.yaml", full)
	rec.waitFor(t, "a complete", hasPods("a-node-1", "b-node-1"), nil)
}

func TestRunMissingDirThenCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	fc := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	// Settle < 0: an event re-reads at once, so only resyncs need the clock.
	src, err := New(Options{Dir: dir, NodeName: node, Clock: fc, ResyncPeriod: time.Minute, Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	run(t, src, &rec)
	if s, _ := rec.last(); len(s.Pods)+len(s.Rejected) != 0 {
		t.Fatalf("missing dir: %s, want an empty set", describe(s))
	}

	create := func(name string) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, manifest(name, "img:1"))
	}
	resync := func() { fc.Step(time.Minute) }

	// Nothing watches a missing directory: the resync finds it.
	create("a")
	rec.waitFor(t, "a after the dir appeared", hasPods("a-node-1"), resync)
	// From then on it is watched: no clock steps needed.
	writeFile(t, dir, "b", manifest("b", "img:1"))
	rec.waitFor(t, "b by fsnotify", hasPods("a-node-1", "b-node-1"), nil)

	// Removing the directory empties the set; a new one is found and watched again.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "empty set after removal", hasPods(), nil)
	create("c")
	rec.waitFor(t, "c after re-creation", hasPods("c-node-1"), resync)
	writeFile(t, dir, "d", manifest("d", "img:1"))
	rec.waitFor(t, "d by fsnotify", hasPods("c-node-1", "d-node-1"), nil)
}

func TestRunCoalescesBurst(t *testing.T) {
	dir := t.TempDir()
	fc := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	src, err := New(Options{Dir: dir, NodeName: node, Clock: fc, ResyncPeriod: time.Hour, Settle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	run(t, src, &rec)
	waiters := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for fc.Waiters() != n {
			if time.Now().After(deadline) {
				t.Fatalf("clock has %d waiters, want %d", fc.Waiters(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waiters(1) // the resync ticker

	for _, name := range []string{"a", "b", "c"} {
		writeFile(t, dir, name+".yaml", manifest(name, "img:1"))
	}
	waiters(2) // the settle timer, armed by the first event
	if n := rec.count(); n != 1 {
		t.Fatalf("%d deliveries before the settle time passed, want 1", n)
	}
	fc.Step(time.Second)
	rec.waitFor(t, "all three", hasPods("a-node-1", "b-node-1", "c-node-1"), nil)
	if n := rec.count(); n != 2 {
		t.Errorf("%d deliveries, want 2: the burst re-read once", n)
	}
}

func TestRunRefusesSecondRun(t *testing.T) {
	src, err := New(Options{Dir: t.TempDir(), NodeName: node})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	run(t, src, &rec)
	if err := src.Run(context.Background(), rec.sink); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

func TestRunFailsOnUnreadableDir(t *testing.T) {
	file := writeFile(t, t.TempDir(), "plain", "x")
	src, err := New(Options{Dir: filepath.Join(file, "sub"), NodeName: node})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	if err := src.Run(context.Background(), rec.sink); err == nil || rec.count() != 0 {
		t.Errorf("Run = %v after %d deliveries; want an error and none", err, rec.count())
	}
}

// TestRefreshStableSeenAndLogsOnce drives refresh directly: resyncs of an
// unchanged directory deliver nothing and keep seen times; a rejected file is
// logged once per distinct error.
func TestRefreshStableSeenAndLogsOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", manifest("a", "img:1"))
	writeFile(t, dir, "bad.yaml", "kind: Pod\n")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	fc := clocktesting.NewFakeClock(t0)
	core, logs := observer.New(zap.InfoLevel)
	src, err := New(Options{Dir: dir, NodeName: node, Clock: fc, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var rec recorder
	refresh := func() {
		t.Helper()
		if err := src.refresh(w, rec.sink); err != nil {
			t.Fatal(err)
		}
		fc.Step(time.Minute)
	}
	rejectedLogs := func() int { return logs.FilterMessage("static pod manifest rejected").Len() }

	refresh()
	refresh()
	refresh()
	if rec.count() != 1 {
		t.Fatalf("%d deliveries for an unchanged directory, want 1", rec.count())
	}
	if n := rejectedLogs(); n != 1 {
		t.Errorf("rejected file logged %d times, want once", n)
	}
	entry := logs.FilterMessage("static pod manifest rejected").All()[0].ContextMap()
	if entry["file"] != filepath.Join(dir, "bad.yaml") || entry["error"] == nil {
		t.Errorf("log fields = %v, want file and error", entry)
	}

	writeFile(t, dir, "bad.yaml", "kind: Deployment\n") // another error
	writeFile(t, dir, "b.yaml", manifest("b", "img:1"))
	refresh()
	if n := rejectedLogs(); n != 2 {
		t.Errorf("rejected file logged %d times after its error changed, want 2", n)
	}
	if rec.count() != 2 {
		t.Fatalf("%d deliveries after adding b, want 2", rec.count())
	}

	// Ignored fields warn once; skipped entries are logged at debug.
	writeFile(t, dir, "c.yaml", manifest("c", "img:1")+"  bogusField: 1\n")
	writeFile(t, dir, "c.yaml~", manifest("c", "img:1"))
	refresh()
	refresh()
	warns := logs.FilterMessage("static pod manifest has fields a Pod does not have; they are ignored").All()
	if len(warns) != 1 || warns[0].ContextMap()["file"] != filepath.Join(dir, "c.yaml") ||
		!strings.Contains(warns[0].ContextMap()["fields"].(string), "bogusField") {
		t.Errorf("ignored-field warnings %v; want one naming c.yaml and bogusField", warns)
	}
	if n := logs.FilterMessage("not a static pod manifest; skipped").Len(); n != 0 {
		t.Errorf("skipped entries logged %d times at info level; want debug only", n)
	}
	s, _ := rec.last()
	seen := func(name string) string { return podByName(s, name).Annotations[AnnotationConfigSeen] }
	if want := t0.Format(time.RFC3339Nano); seen("a-node-1") != want {
		t.Errorf("a seen = %s, want its first read %s", seen("a-node-1"), want)
	}
	if want := t0.Add(3 * time.Minute).Format(time.RFC3339Nano); seen("b-node-1") != want {
		t.Errorf("b seen = %s, want %s", seen("b-node-1"), want)
	}
}
