package tracing_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/tracing"
	"github.com/actorlet/actorlet/podspec"
)

// startNode starts a node on the in-process simulated runtime whose pod
// syncs, effects and CRI calls are traced with tp, running pods.
func startNode(t *testing.T, tp trace.TracerProvider, pods ...*corev1.Pod) *agent.Agent {
	t.Helper()
	rt, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt, cri.TracingDialOptions(tp)...)
	if err != nil {
		t.Fatal(err)
	}
	client := cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { client.Close(); stop(); rt.Close() })
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = 50*time.Millisecond, 200*time.Millisecond
	a, err := agent.Start(context.Background(), agent.WithNodeName("node-1"), agent.WithRootDir(t.TempDir()),
		agent.WithRuntime(client, sim.DefaultRuntimeName), agent.WithPodConfig(podspec.Options{PodLogsDir: t.TempDir()}),
		agent.WithLifecycle(lc), agent.WithRelistPeriod(50*time.Millisecond), agent.WithLogger(zaptest.NewLogger(t)),
		agent.WithPods("test", pods), agent.WithTracing(tp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stopOnce(a) })
	return a
}

var stopped sync.Map

// stopOnce stops a once (Agent.Stop is not idempotent).
func stopOnce(a *agent.Agent) error {
	if _, done := stopped.LoadOrStore(a, true); done {
		return nil
	}
	return a.Stop(context.Background())
}

func webPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("uid-web")},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{Name: "app", Image: "example/app:1", ImagePullPolicy: corev1.PullAlways}}},
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// journalLog follows the node's journal (from its first record, so that
// nothing is compacted before it is read): the pod's event kinds by
// sequence number.
type journalLog struct {
	mu     sync.Mutex
	events map[uint64]string
}

func followJournal(t *testing.T, j *journal.Journal, uid string) *journalLog {
	t.Helper()
	l := &journalLog{events: map[uint64]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = j.Follow(ctx, 0, func(r journal.Record) error {
			if r.PodUID == uid && r.Envelope != nil {
				l.mu.Lock()
				l.events[r.Seq] = r.Envelope.GetEvent().Name()
				l.mu.Unlock()
			}
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func (l *journalLog) snapshot() map[uint64]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.events)
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	v, _ := attr(s, key)
	return v.AsString()
}

// spanSet indexes the ended spans of a recorder.
type spanSet struct {
	all  []sdktrace.ReadOnlySpan
	byID map[trace.SpanID]sdktrace.ReadOnlySpan
}

func spansOf(r *tracetest.SpanRecorder) spanSet {
	s := spanSet{all: r.Ended(), byID: map[trace.SpanID]sdktrace.ReadOnlySpan{}}
	for _, sp := range s.all {
		s.byID[sp.SpanContext().SpanID()] = sp
	}
	return s
}

func (s spanSet) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.all {
		if sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

// parent is sp's parent among the recorded spans, or nil.
func (s spanSet) parent(sp sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	if !sp.Parent().IsValid() {
		return nil
	}
	return s.byID[sp.Parent().SpanID()]
}

// child is the one span named name whose parent is p; it fails the test
// unless there is exactly one.
func (s spanSet) child(t *testing.T, p sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, sp := range s.named(name) {
		if sp.Parent().SpanID() == p.SpanContext().SpanID() {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %q under %s %q, want 1; spans: %s", len(found), name, p.Name(), p.SpanContext().SpanID(), s)
	}
	return found[0]
}

func (s spanSet) String() string {
	var b strings.Builder
	for _, sp := range s.all {
		fmt.Fprintf(&b, "\n  %s %s parent=%s", sp.SpanContext().SpanID(), sp.Name(), sp.Parent().SpanID())
	}
	return b.String()
}

// isSync tells a PodActor's sync span.
func isSync(sp sdktrace.ReadOnlySpan) bool {
	return slices.Contains([]string{"syncPod", "syncTerminatingPod", "syncTerminatedPod"}, sp.Name())
}

// TestPodLifecycleSpans runs a pod and removes it on a traced node, and
// checks the trace against the pod's journal: each sync's span events are
// the events the journal holds at those sequence numbers; each effect is a
// child of the sync that journaled its intent and started it, with the
// journal sequence it was decided at; each CRI call is a child of its
// effect; the sync that takes an effect's result links to the effect.
func TestPodLifecycleSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	pod := webPod()
	uid := string(pod.UID)
	a := startNode(t, tp, pod)
	log := followJournal(t, a.Journal(), uid)
	waitFor(t, "web running", func() bool {
		p, ok := a.Statuses().Get(uid)
		return ok && p.Status.Phase == corev1.PodRunning
	})
	waitFor(t, "ContainerStarted read from the journal", func() bool {
		return slices.Contains(slices.Collect(maps.Values(log.snapshot())), "ContainerStarted")
	})
	a.SetPods("test", nil)
	// The pod's end compacts its events into a snapshot, possibly before
	// the follower read the last ones: the trace is checked against what
	// the journal showed (at least up to ContainerStarted), and is gapless.
	waitFor(t, "the span of PodRemoved", func() bool {
		for _, sp := range rec.Ended() {
			for _, ev := range sp.Events() {
				if ev.Name == "PodRemoved" {
					return true
				}
			}
		}
		return false
	})
	if err := stopOnce(a); err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	s := spansOf(rec)
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, s)
		}
	})

	// Every sync span names the pod as the kubelet does, and its span
	// events are the journal's events at their sequence numbers.
	seqOf := map[string]uint64{} // first seq of each event kind
	syncOfSeq := map[uint64]sdktrace.ReadOnlySpan{}
	for _, sp := range s.all {
		if !isSync(sp) {
			continue
		}
		if got := str(sp, "k8s.pod.uid"); got != uid {
			t.Errorf("%s: k8s.pod.uid %q, want %q", sp.Name(), got, uid)
		}
		if got := str(sp, tracing.PodKey); got != "default/web" {
			t.Errorf("%s: k8s.pod %q", sp.Name(), got)
		}
		if got := str(sp, "k8s.namespace.name"); got != "default" {
			t.Errorf("%s: k8s.namespace.name %q", sp.Name(), got)
		}
		for _, ev := range sp.Events() {
			seq := int64(-1)
			for _, kv := range ev.Attributes {
				if kv.Key == tracing.JournalSeqKey {
					seq = kv.Value.AsInt64()
				}
			}
			if got, ok := events[uint64(seq)]; ok && got != ev.Name {
				t.Errorf("%s: span event %s at seq %d; the journal has %q there", sp.Name(), ev.Name, seq, got)
			}
			if _, ok := seqOf[ev.Name]; !ok {
				seqOf[ev.Name] = uint64(seq)
			}
			if prev := syncOfSeq[uint64(seq)]; prev != nil {
				t.Errorf("seq %d on two syncs: %s and %s", seq, prev.Name(), sp.Name())
			}
			syncOfSeq[uint64(seq)] = sp
		}
	}
	for seq, name := range events {
		if syncOfSeq[seq] == nil {
			t.Errorf("journal event %d %s is on no sync span", seq, name)
		}
	}
	for seq := uint64(1); seq <= seqOf["PodRemoved"]; seq++ {
		if syncOfSeq[seq] == nil {
			t.Errorf("no sync span journaled seq %d (PodRemoved is %d)", seq, seqOf["PodRemoved"])
		}
	}

	// The first sync: the pod's creation, with its sandbox's intent.
	accepted := syncOfSeq[seqOf["PodAccepted"]]
	if accepted == nil || accepted.Name() != "syncPod" || str(accepted, tracing.UpdateTypeKey) != "create" {
		t.Fatalf("PodAccepted is journaled by %v, want a syncPod span with k8s.pod.update_type=create", accepted)
	}

	// An effect: the child of the sync that started it (the one that
	// journaled its intent, or a later one: nothing starts before the
	// runtime's first view), carrying the pod, the journal seq it was
	// decided at (its intent at or before it) and its CRI calls as
	// children.
	effect := func(name string, intent string, calls ...string) sdktrace.ReadOnlySpan {
		t.Helper()
		spans := s.named(name)
		if len(spans) == 0 {
			t.Fatalf("no %s span; spans: %s", name, s)
		}
		sp := spans[0]
		parent := s.parent(sp)
		if parent == nil || !isSync(parent) {
			t.Fatalf("%s's parent is %v, want a sync span", name, parent)
		}
		if got := str(sp, "k8s.pod.uid"); got != uid {
			t.Errorf("%s: k8s.pod.uid %q", name, got)
		}
		v, ok := attr(sp, tracing.JournalSeqKey)
		if !ok {
			t.Fatalf("%s has no %s", name, tracing.JournalSeqKey)
		}
		if intent != "" {
			if seq := uint64(v.AsInt64()); seq < seqOf[intent] {
				t.Errorf("%s decided at seq %d, before its intent %s (seq %d)", name, seq, intent, seqOf[intent])
			}
			if pv, _ := attr(parent, tracing.JournalSeqKey); pv.AsInt64() != v.AsInt64() {
				t.Errorf("%s at seq %d, its sync at %d", name, v.AsInt64(), pv.AsInt64())
			}
		}
		for _, c := range calls {
			call := s.child(t, sp, c)
			if call.SpanKind() != trace.SpanKindClient {
				t.Errorf("%s: kind %v, want client", c, call.SpanKind())
			}
		}
		return sp
	}
	sandbox := effect("createPodSandbox", "SandboxRequested",
		"runtime.v1.RuntimeService/RunPodSandbox", "runtime.v1.RuntimeService/PodSandboxStatus")
	effect("pullImage", "", "runtime.v1.ImageService/PullImage")
	create := effect("createContainer", "ContainerRequested", "runtime.v1.RuntimeService/CreateContainer")
	if got := str(create, "k8s.container.name"); got != "app" {
		t.Errorf("createContainer: k8s.container.name %q", got)
	}
	effect("startContainer", "ContainerCreated", "runtime.v1.RuntimeService/StartContainer")
	kill := effect("killContainer", "PodTerminating", "runtime.v1.RuntimeService/StopContainer")
	if p := s.parent(kill); p.Name() != "syncTerminatingPod" || str(p, tracing.UpdateTypeKey) != "kill" {
		t.Errorf("killContainer's parent is %s (update_type %q), want syncTerminatingPod (kill)", p.Name(), str(p, tracing.UpdateTypeKey))
	}
	effect("removePodSandbox", "", "runtime.v1.RuntimeService/RemovePodSandbox")

	// A sync that takes an effect's result links to the effect.
	results := 0
	for _, sp := range s.all {
		if !isSync(sp) || str(sp, tracing.InputKey) != "EffectResult" {
			continue
		}
		results++
		if len(sp.Links()) != 1 {
			t.Errorf("%s of an effect's result has %d links, want 1", sp.Name(), len(sp.Links()))
			continue
		}
		effect := s.byID[sp.Links()[0].SpanContext.SpanID()]
		if effect == nil || !isSync(s.parent(effect)) {
			t.Errorf("%s of an effect's result links to %v, not to an effect", sp.Name(), effect)
		}
	}
	if results == 0 {
		t.Errorf("no sync took an effect's result; spans: %s", s)
	}
	if p := s.parent(sandbox); str(p, tracing.InputKey) == "" {
		t.Errorf("createPodSandbox's sync has no %s", tracing.InputKey)
	}
	last := syncOfSeq[seqOf["PodRemoved"]]
	if last.Name() != "syncTerminatedPod" {
		t.Errorf("PodRemoved journaled by %s, want syncTerminatedPod", last.Name())
	}
}

// dump logs the spans, for a failed test.
func dump(t *testing.T, s spanSet) {
	t.Helper()
	for _, sp := range s.all {
		var evs []string
		for _, e := range sp.Events() {
			if e.Name == "message" {
				continue
			}
			evs = append(evs, fmt.Sprint(e.Name, e.Attributes))
		}
		var links []string
		for _, l := range sp.Links() {
			links = append(links, l.SpanContext.SpanID().String())
		}
		t.Logf("%s %s parent=%s in=%s seq=%v links=%v events=%v", sp.SpanContext().SpanID(), sp.Name(), sp.Parent().SpanID(), str(sp, tracing.InputKey), val(sp), links, evs)
	}
}

func val(sp sdktrace.ReadOnlySpan) string { v, _ := attr(sp, tracing.JournalSeqKey); return v.Emit() }

// TestFailedEffectSpan: an effect that fails (an image the registry does
// not have) ends its span with an error status and the kubelet's reason,
// and its CRI call's span with the gRPC error.
func TestFailedEffectSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	pod := webPod()
	pod.Spec.Containers[0].Image = "example/notfound:1"
	uid := string(pod.UID)
	a := startNode(t, tp, pod)
	failed := func() (pull, call sdktrace.ReadOnlySpan) {
		s := spansOf(rec)
		for _, sp := range s.named("pullImage") {
			if sp.Status().Code == codes.Error {
				for _, c := range s.all {
					if c.Name() == "runtime.v1.ImageService/PullImage" && c.Parent().SpanID() == sp.SpanContext().SpanID() {
						return sp, c
					}
				}
			}
		}
		return nil, nil
	}
	waitFor(t, "a failed pullImage span", func() bool { p, _ := failed(); return p != nil })
	pull, call := failed()
	if got := str(pull, tracing.ReasonKey); got != "ErrImagePull" {
		t.Errorf("pullImage: %s %q, want ErrImagePull", tracing.ReasonKey, got)
	}
	if got := str(pull, "k8s.pod.uid"); got != uid {
		t.Errorf("pullImage: k8s.pod.uid %q", got)
	}
	if !strings.Contains(pull.Status().Description, "not found") {
		t.Errorf("pullImage status %q, want the runtime's message", pull.Status().Description)
	}
	if call.Status().Code != codes.Error {
		t.Errorf("the PullImage call's span has status %v, want an error", call.Status())
	}
	_ = stopOnce(a)
}
