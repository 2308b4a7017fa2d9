package agent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/agent"
)

// startExt starts a node on e's runtime with the extension points set by
// with.
func (e *env) startExt(with []agent.Option, pods ...*corev1.Pod) *agent.Agent {
	e.t.Helper()
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = 50*time.Millisecond, 200*time.Millisecond
	a, err := agent.Start(context.Background(), append(e.options(lc, pods), with...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// recorder is an EventHandler that keeps what it handled and its cursor in
// memory (a real one keeps them on disk); failAt makes Handle fail once at
// that position.
type recorder struct {
	mu     sync.Mutex
	cursor uint64
	seen   map[uint64]journal.Record
	calls  int
	failAt uint64
}

func newRecorder() *recorder { return &recorder{seen: map[uint64]journal.Record{}} }

func (r *recorder) Cursor(context.Context) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cursor, nil
}

func (r *recorder) Handle(_ context.Context, rec journal.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if rec.Position == r.failAt {
		r.failAt = 0
		return errors.New("handler failed on purpose")
	}
	r.seen[rec.Position] = rec
	r.cursor = rec.Position + 1
	return nil
}

func (r *recorder) state() (cursor uint64, seen map[uint64]journal.Record, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen = make(map[uint64]journal.Record, len(r.seen))
	for p, rec := range r.seen {
		seen[p] = rec
	}
	return r.cursor, seen, r.calls
}

// journalPositions reads the stopped node's journal: every record's
// position, and each pod's last seq.
func journalPositions(t *testing.T, root string) (map[uint64]bool, map[string]uint64) {
	t.Helper()
	j, err := journal.OpenReadOnly(context.Background(), root, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	pos, last := map[uint64]bool{}, map[string]uint64{}
	if err := j.Records(context.Background(), 0, func(r journal.Record) error {
		pos[r.Position] = true
		last[r.PodUID] = r.Seq
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return pos, last
}

// An event handler gets every journaled event in order, at least once; a
// failed Handle gets its record again; and a handler restarted with the
// node resumes from its cursor: over both runs, every record of the journal
// was handled, each position once.
func TestEventHandlersGetEveryEventAndResumeFromTheirCursor(t *testing.T) {
	e := newEnv(t)
	h := newRecorder()
	h.failAt = 2
	web := pod("web", corev1.RestartPolicyAlways)
	a := e.startExt([]agent.Option{agent.WithEventHandler(h)}, web)
	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, string(ph)
	})
	// Every event of web so far has reached the handler.
	n := uint64(0)
	if err := a.Journal().Records(context.Background(), 0, func(journal.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the handler caught up", func() (bool, string) {
		c, _, _ := h.state()
		return c == n+1, fmt.Sprintf("cursor %d, journal holds %d records", c, n)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	cursor, seen, calls := h.state()
	if _, again := seen[2]; !again || calls != len(seen)+1 {
		t.Fatalf("the record whose Handle failed was not handed out again: seen %d records in %d calls", len(seen), calls)
	}

	// Restart: a new handler (as after a kill -9 of its process) with the
	// saved cursor, and more events to come.
	h2 := newRecorder()
	h2.cursor = cursor
	job := pod("job", corev1.RestartPolicyNever, corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "10ms"})
	a = e.startExt([]agent.Option{agent.WithEventHandler(h2)}, web, job)
	waitFor(t, "job Succeeded", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-job")
		return ph == corev1.PodSucceeded, string(ph)
	})
	n = 0
	if err := a.Journal().Records(context.Background(), 0, func(journal.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted handler caught up", func() (bool, string) {
		c, _, _ := h2.state()
		return c > n, fmt.Sprintf("cursor %d, journal holds %d records", c, n)
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	positions, lastSeq := journalPositions(t, e.root)
	cursor2, seen2, _ := h2.state()
	for p := range seen2 {
		if p < cursor {
			t.Fatalf("the restarted handler got position %d, before its cursor %d", p, cursor)
		}
		seen[p] = seen2[p]
	}
	// Records committed while the node stopped (after its handlers) come at
	// the next start, from cursor2; every one before it was handed out.
	for p := range positions {
		if _, ok := seen[p]; !ok && p < cursor2 {
			t.Fatalf("journal record at position %d was never handed out (cursors %d, %d)", p, cursor, cursor2)
		}
	}
	// Per pod, in seq order with no gap.
	got := map[string]uint64{}
	for p := uint64(1); p <= uint64(len(seen)); p++ {
		r, ok := seen[p]
		if !ok {
			t.Fatalf("position %d missing among %d handled", p, len(seen))
		}
		if r.Seq != got[r.PodUID]+1 {
			t.Fatalf("pod %s: seq %d after %d", r.PodUID, r.Seq, got[r.PodUID])
		}
		got[r.PodUID] = r.Seq
	}
	if got["uid-job"] == 0 || got["uid-web"] == 0 {
		t.Fatalf("handled up to %v; the journal ends at %v", got, lastSeq)
	}
}

// rejectNamed rejects pods by name, with its own reason.
type rejectNamed string

func (n rejectNamed) Admit(pod *corev1.Pod, _ []*corev1.Pod) (string, string) {
	if pod.Name == string(n) {
		return "NotThisOne", "the node does not run " + pod.Name
	}
	return "", ""
}

// An admit handler's rejection follows the kubelet's semantics: the pod is
// Failed with the handler's reason and message, and never gets a sandbox;
// the other pods run.
func TestAdmitHandlersRejectWithTheirReason(t *testing.T) {
	e := newEnv(t)
	bad, good := pod("bad", corev1.RestartPolicyAlways), pod("good", corev1.RestartPolicyAlways)
	a := e.startExt([]agent.Option{agent.WithAdmitHandler(rejectNamed("nobody")), agent.WithAdmitHandler(rejectNamed("bad"))}, bad, good)
	defer a.Stop(context.Background())
	waitFor(t, "good Running, bad Failed", func() (bool, string) {
		g, _ := phaseOf(a, "uid-good")
		b, _ := phaseOf(a, "uid-bad")
		return g == corev1.PodRunning && b == corev1.PodFailed, fmt.Sprintf("good %s bad %s", g, b)
	})
	_, p := phaseOf(a, "uid-bad")
	if p.Status.Reason != "NotThisOne" || p.Status.Message != "the node does not run bad" {
		t.Fatalf("bad's status: reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	v, err := e.client.ListPod(context.Background(), "uid-bad")
	if err != nil || !v.Empty() {
		t.Fatalf("the rejected pod has runtime objects: %v %v", v, err)
	}
	e.checkViolations()
}
