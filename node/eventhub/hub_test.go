package eventhub

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
)

// fakeSink records the events written, as a node's API client would; fail
// makes its next calls fail; block holds each call until released.
type fakeSink struct {
	mu      sync.Mutex
	created []string // reason/host/component/count
	patched []string
	fail    []error
	block   chan struct{}
	calls   int
}

func (s *fakeSink) take() error {
	s.mu.Lock()
	s.calls++
	block := s.block
	var err error
	if len(s.fail) > 0 {
		err, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if block != nil {
		<-block
	}
	return err
}

func line(e *corev1.Event) string {
	return fmt.Sprintf("%s %s/%s %s/%s %d", e.Reason, e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Source.Component, e.Source.Host, e.Count)
}

func (s *fakeSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if err := s.take(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, line(e))
	out := e.DeepCopy()
	out.ResourceVersion = "1"
	return out, nil
}

func (s *fakeSink) Update(e *corev1.Event) (*corev1.Event, error) { return e, nil }

func (s *fakeSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	if err := s.take(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patched = append(s.patched, line(e))
	return e.DeepCopy(), nil
}

func (s *fakeSink) lines() (created, patched []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.created...), append([]string(nil), s.patched...)
}

// waitFor waits for cond, at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + "name"}}
}

// ev is an event of host as the broadcaster hands it out.
func ev(host, reason string) *corev1.Event {
	return &corev1.Event{Reason: reason, Source: corev1.EventSource{Component: "kubelet", Host: host},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}, Count: 1}
}

func newHub(t *testing.T, opts Options) *Hub {
	t.Helper()
	opts.Scheme = scheme.Scheme
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

// Each node's events reach its own sink, in order, with its source
// (component and host) and their reasons; once written no writer runs.
func TestEventsReachTheirNodesSink(t *testing.T) {
	h := newHub(t, Options{})
	sinks := map[string]*fakeSink{"node-a": {}, "node-b": {}}
	recs := map[string]func(string){}
	for name, s := range sinks {
		rec, _, err := h.Add(name, "kubelet", s, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs[name] = func(reason string) { rec.Event(pod("p-"+name), corev1.EventTypeNormal, reason, "msg "+reason) }
	}
	for _, reason := range []string{"Pulling", "Pulled", "Created", "Started"} {
		recs["node-a"](reason)
		recs["node-b"](reason)
	}
	for name, s := range sinks {
		waitFor(t, name+"'s events", func() bool { c, _ := s.lines(); return len(c) == 4 })
		created, _ := s.lines()
		for i, reason := range []string{"Pulling", "Pulled", "Created", "Started"} {
			if want := fmt.Sprintf("%s ns/p-%s kubelet/%s 1", reason, name, name); created[i] != want {
				t.Errorf("%s's event %d: %q, want %q", name, i, created[i], want)
			}
		}
	}
	waitFor(t, "no writer left", func() bool { return h.Writing() == 0 })
}

// A node's repeated event is aggregated by its correlator: created once,
// then patched with its count, as client-go's broadcaster writes it.
func TestRepeatedEventIsPatched(t *testing.T) {
	h := newHub(t, Options{})
	s := &fakeSink{}
	rec, _, err := h.Add("node-a", "kubelet", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Event(pod("p"), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	waitFor(t, "the first write", func() bool { c, _ := s.lines(); return len(c) == 1 })
	rec.Event(pod("p"), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	waitFor(t, "the patch", func() bool { _, p := s.lines(); return len(p) == 1 })
	created, patched := s.lines()
	if len(created) != 1 || patched[0] != "BackOff ns/p kubelet/node-a 2" {
		t.Fatalf("created %q, patched %q; want one creation, then a patch with count 2", created, patched)
	}
}

// A transport error is retried and the node's order kept; the API
// server's refusal is not retried.
func TestFailedWritesRetriedByKind(t *testing.T) {
	h := newHub(t, Options{Sleep: time.Millisecond})
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "e", errors.New("no"))
	down := errors.New("connection refused")
	// By call: First fails twice, then is written; Refused is refused.
	s := &fakeSink{fail: []error{down, down, nil, refused}}
	rec, _, err := h.Add("node-a", "kubelet", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Event(pod("p"), corev1.EventTypeNormal, "First", "1")
	rec.Event(pod("p"), corev1.EventTypeNormal, "Refused", "2")
	rec.Event(pod("p"), corev1.EventTypeNormal, "Third", "3")
	waitFor(t, "two events written", func() bool { c, _ := s.lines(); return len(c) == 2 })
	created, _ := s.lines()
	if !strings.HasPrefix(created[0], "First ") || !strings.HasPrefix(created[1], "Third ") {
		t.Fatalf("written %q, want First (after two retries), then Third (Refused not retried)", created)
	}
	s.mu.Lock()
	calls := s.calls
	s.mu.Unlock()
	if calls != 5 {
		t.Fatalf("%d calls to the sink, want 5 (First 3 times, Refused once, Third once)", calls)
	}
}

// A node's queue is bounded: beyond the limit its events are dropped and
// counted; another node's are not.
func TestQueueLimitPerNode(t *testing.T) {
	h := newHub(t, Options{QueueLimit: 3})
	block := make(chan struct{})
	slow, other := &fakeSink{block: block}, &fakeSink{}
	if _, _, err := h.Add("slow", "kubelet", slow, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Add("other", "kubelet", other, nil); err != nil {
		t.Fatal(err)
	}
	// The first is taken by the writer (held in the sink), three queue,
	// two are dropped.
	h.dispatch(ev("slow", "E0"))
	waitFor(t, "the writer holding the first event", func() bool { slow.mu.Lock(); defer slow.mu.Unlock(); return slow.calls == 1 })
	for i := 1; i <= 5; i++ {
		h.dispatch(ev("slow", fmt.Sprintf("E%d", i)))
	}
	h.dispatch(ev("other", "O"))
	if d := h.Dropped("slow"); d != 2 {
		t.Fatalf("slow dropped %d, want 2", d)
	}
	if d := h.Dropped("other"); d != 0 {
		t.Fatalf("other dropped %d, want 0", d)
	}
	waitFor(t, "the other node's event written while slow's writer is held", func() bool { c, _ := other.lines(); return len(c) == 1 })
	close(block)
	waitFor(t, "slow's queue written", func() bool { c, _ := slow.lines(); return len(c) == 4 })
	created, _ := slow.lines()
	for i, c := range created {
		if !strings.HasPrefix(c, fmt.Sprintf("E%d ", i)) {
			t.Fatalf("slow wrote %q, want E0..E3 in order", created)
		}
	}
}

// A removed node's writer stops (its retries too) and its later events
// are dropped; the name may be added again.
func TestRemoveStopsTheNodesWriter(t *testing.T) {
	h := newHub(t, Options{Sleep: time.Hour})
	s := &fakeSink{fail: []error{errors.New("connection refused")}}
	rec, remove, err := h.Add("node-a", "kubelet", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Add("node-a", "kubelet", &fakeSink{}, nil); err == nil {
		t.Fatal("node-a added twice")
	}
	rec.Event(pod("p"), corev1.EventTypeNormal, "Pulling", "x")
	waitFor(t, "the first try", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.calls == 1 })
	// The writer sleeps up to an hour before its second try: remove
	// ends it.
	h.mu.Lock()
	done := h.nodes["node-a"].done
	h.mu.Unlock()
	remove()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the removed node's writer still runs")
	}
	h.dispatch(ev("node-a", "Pulled"))
	again := &fakeSink{}
	rec2, _, err := h.Add("node-a", "kubelet", again, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec2.Event(pod("p"), corev1.EventTypeNormal, "Started", "z")
	waitFor(t, "the node added again writes", func() bool { c, _ := again.lines(); return len(c) == 1 })
	created, _ := again.lines()
	if !strings.HasPrefix(created[0], "Started ") {
		t.Fatalf("the node added again wrote %q, want Started only", created)
	}
	if c, _ := s.lines(); len(c) != 0 {
		t.Fatalf("the removed node's sink wrote %q", c)
	}
}

// The nodes share the Hub's one correlator: the same event of two nodes
// about objects of the same name is not aggregated into one (the source
// host is in its keys), and its caches are the Hub's, whatever the number
// of nodes: with room for one entry, node-b's event evicts node-a's, so
// node-a's repeat is created again where a correlator of its own would
// have patched it (TestRepeatedEventIsPatched).
func TestNodesShareOneCorrelator(t *testing.T) {
	h := newHub(t, Options{Correlator: record.CorrelatorOptions{LRUCacheSize: 1}})
	a, b := &fakeSink{}, &fakeSink{}
	recA, _, err := h.Add("node-a", "kubelet", a, nil)
	if err != nil {
		t.Fatal(err)
	}
	recB, _, err := h.Add("node-b", "kubelet", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	backOff := func(rec record.EventRecorder) {
		rec.Event(pod("p"), corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	}
	backOff(recA)
	waitFor(t, "node-a's first write", func() bool { c, _ := a.lines(); return len(c) == 1 })
	backOff(recB)
	waitFor(t, "node-b's write", func() bool { c, _ := b.lines(); return len(c) == 1 })
	if created, patched := b.lines(); created[0] != "BackOff ns/p kubelet/node-b 1" || len(patched) != 0 {
		t.Fatalf("node-b wrote %q, patched %q; want its own event created with count 1", created, patched)
	}
	backOff(recA)
	waitFor(t, "node-a's second write", func() bool { c, p := a.lines(); return len(c)+len(p) == 2 })
	created, patched := a.lines()
	if len(patched) != 0 || created[1] != "BackOff ns/p kubelet/node-a 1" {
		t.Fatalf("node-a created %q, patched %q; want its repeat created again (evicted from the shared caches by node-b's)", created, patched)
	}
}

// Every NodesPerBroadcaster nodes added in turn share a broadcaster (and
// its queue): one more node starts another, and each node's events still
// reach its own sink.
func TestNodesPerBroadcaster(t *testing.T) {
	h := newHub(t, Options{})
	n := NodesPerBroadcaster + 1
	sinks := make([]*fakeSink, n)
	for i := range n {
		sinks[i] = &fakeSink{}
		rec, _, err := h.Add(fmt.Sprintf("node-%02d", i), "kubelet", sinks[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.Event(pod("p"), corev1.EventTypeNormal, "Started", "started")
	}
	h.mu.Lock()
	got := len(h.broadcasters)
	h.mu.Unlock()
	if got != 2 {
		t.Fatalf("%d nodes share %d broadcasters, want 2", n, got)
	}
	for i, s := range sinks {
		waitFor(t, fmt.Sprintf("node-%02d's event", i), func() bool { c, _ := s.lines(); return len(c) == 1 })
		if c, _ := s.lines(); c[0] != fmt.Sprintf("Started ns/p kubelet/node-%02d 1", i) {
			t.Fatalf("node-%02d wrote %q", i, c)
		}
	}
	h.Shutdown()
	if _, _, err := h.Add("late", "kubelet", &fakeSink{}, nil); err == nil {
		t.Fatal("a node was added after Shutdown")
	}
}
