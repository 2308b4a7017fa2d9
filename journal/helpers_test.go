package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"
	testingclock "k8s.io/utils/clock/testing"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// helperEnv selects a subprocess role when the test binary re-executes
// itself (see helperprocess_test.go).
const helperEnv = "ACTORLET_JOURNAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role))
	}
	goleak.VerifyTestMain(m)
}

// testTime is the fake clock's time in tests.
var testTime = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func testOptions(t testing.TB) Options {
	return Options{
		Logger:      zaptest.NewLogger(t),
		Clock:       testingclock.NewFakePassiveClock(testTime),
		OpenTimeout: 200 * time.Millisecond,
	}
}

// openT opens a journal that is closed when the test ends.
func openT(t testing.TB, dir string, opts Options) *Journal {
	t.Helper()
	j, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

func closeT(t testing.TB, j *Journal) {
	t.Helper()
	if err := j.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// ev builds an envelope of pod uid at seq.
func ev(uid string, seq uint64) *pb.Envelope {
	return &pb.Envelope{
		Seq:    seq,
		PodUid: uid,
		Event: &pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{
			Name: "c", Attempt: uint32(seq), ContainerId: fmt.Sprintf("%s-%d", uid, seq),
		}}},
	}
}

// evs builds n envelopes of pod uid from seq first on.
func evs(uid string, first uint64, n int) []*pb.Envelope {
	out := make([]*pb.Envelope, n)
	for i := range out {
		out[i] = ev(uid, first+uint64(i))
	}
	return out
}

func appendT(t testing.TB, j *Journal, uid string, events ...*pb.Envelope) {
	t.Helper()
	if err := j.Append(context.Background(), uid, events...); err != nil {
		t.Fatalf("Append(%s, seq %d..): %v", uid, events[0].GetSeq(), err)
	}
}

func loadT(t testing.TB, j *Journal, uid string) *Stream {
	t.Helper()
	s, err := j.Load(context.Background(), uid)
	if err != nil {
		t.Fatalf("Load(%s): %v", uid, err)
	}
	return s
}

// seqsOf lists the seqs of a stream's events.
func seqsOf(s *Stream) []uint64 {
	var out []uint64
	for _, e := range s.Events {
		out = append(out, e.Seq)
	}
	return out
}

// wantSeqs checks that the stream's events are exactly from..to, each as
// built by ev.
func wantSeqs(t testing.TB, s *Stream, uid string, from, to uint64) {
	t.Helper()
	n := 0
	if to >= from {
		n = int(to - from + 1)
	}
	if len(s.Events) != n {
		t.Fatalf("pod %s: seqs %v, want %d..%d", uid, seqsOf(s), from, to)
	}
	for i, e := range s.Events {
		want := ev(uid, from+uint64(i))
		want.SchemaVersion = SchemaVersion
		want.TimeUnixNano = e.TimeUnixNano
		if !proto.Equal(e, want) {
			t.Fatalf("pod %s event %d:\n got %v\nwant %v", uid, i, e, want)
		}
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// writerGate holds the writer before its commits so that requests queue up.
type writerGate struct {
	mu      sync.Mutex
	held    bool
	entered chan struct{} // closed when the writer first waits at the gate
	release chan struct{}
	once    sync.Once
}

func newWriterGate() *writerGate {
	return &writerGate{held: true, entered: make(chan struct{}), release: make(chan struct{})}
}

// hook is Options.beforeCommit: the first commit waits until Open.
func (g *writerGate) hook(int) {
	g.mu.Lock()
	held := g.held
	g.held = false
	g.mu.Unlock()
	if held {
		close(g.entered)
		<-g.release
	}
}

func (g *writerGate) open() { g.once.Do(func() { close(g.release) }) }

// holdWriter makes the writer busy with a commit for pod "gate-keeper" that
// waits at the gate; it returns a function that releases it and waits for
// that append.
func holdWriter(t *testing.T, j *Journal, g *writerGate) (release func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- j.Append(context.Background(), "gate-keeper", ev("gate-keeper", 1)) }()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("writer never reached the gate")
	}
	t.Cleanup(g.open)
	return func() {
		t.Helper()
		g.open()
		if err := <-done; err != nil {
			t.Fatalf("gate-keeper append: %v", err)
		}
	}
}

// quarantinedFiles lists the quarantine files in dir.
func quarantinedFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, FileName+".corrupt-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustContain(t testing.TB, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("error %v does not mention %q", err, p)
		}
	}
}

func wantErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// sealT frames payload for key as the journal does, its head CRC from the
// payload's header if it has one: damage behind sound checksums.
func sealT(key, payload []byte) []byte {
	uid, seq, err := readHeader(payload)
	if err != nil {
		uid, seq = nil, 0
	}
	return seal(key, payload, uid, seq)
}
