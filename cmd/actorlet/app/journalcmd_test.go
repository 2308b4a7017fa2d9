package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runJournalCmd(ctx context.Context, out *syncBuffer, args ...string) error {
	cmd := newJournalCommand()
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	return cmd.ExecuteContext(ctx)
}

func started(uid string, seq uint64) *pb.Envelope {
	return &pb.Envelope{Seq: seq, PodUid: uid, Event: &pb.Event{Kind: &pb.Event_ContainerStarted{
		ContainerStarted: &pb.ContainerStarted{Name: "c", Attempt: uint32(seq), ContainerId: "cid"}}}}
}

// On a running node (the journal held open for writing, its socket
// served), pods, events and verify work, -o json gives JSON, and events
// --follow prints the events appended after it started.
func TestJournalCommandsOnARunningNode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	j, err := journal.Open(ctx, dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	const uid = "8d0c4f3e-0000-4000-8000-000000000001"
	if err := j.Append(ctx, uid, started(uid, 1), started(uid, 2)); err != nil {
		t.Fatal(err)
	}
	l, err := journal.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = j.Serve(ctx, l) }()

	var out syncBuffer
	if err := runJournalCmd(ctx, &out, "pods", "-o", "json", "--root-dir", dir); err != nil {
		t.Fatal(err, out.String())
	}
	var pods []podJSON
	if err := json.Unmarshal([]byte(out.String()), &pods); err != nil || len(pods) != 1 || pods[0].UID != uid || pods[0].Seq != 2 {
		t.Fatalf("pods -o json: %v %q", err, out.String())
	}
	out = syncBuffer{}
	if err := runJournalCmd(ctx, &out, "verify", "--root-dir", dir); err != nil || !strings.Contains(out.String(), "is sound: 1 pods") {
		t.Fatalf("verify: %v %q", err, out.String())
	}
	if err := runJournalCmd(ctx, &out, "pods", "-o", "yaml", "--root-dir", dir); err == nil || !strings.Contains(err.Error(), `--output "yaml"`) {
		t.Fatalf("-o yaml: %v", err)
	}

	var follow syncBuffer
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runJournalCmd(fctx, &follow, "events", uid, "-f", "-o", "json", "--interval", "20ms", "--root-dir", dir)
	}()
	lines := func() []eventJSON {
		var evs []eventJSON
		for _, line := range strings.Split(strings.TrimSpace(follow.String()), "\n") {
			var e eventJSON
			if json.Unmarshal([]byte(line), &e) == nil && e.Seq != 0 {
				evs = append(evs, e)
			}
		}
		return evs
	}
	waitUntil(t, "the first two events", func() bool { return len(lines()) == 2 })
	if err := j.Append(ctx, uid, started(uid, 3)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the appended event", func() bool { return len(lines()) == 3 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, e := range lines() {
		if e.Seq != uint64(i+1) || e.Event != "ContainerStarted" {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// `journal events --follow --from N` without a pod prints the node's stream
// from position N, then the events appended while it runs; on a stopped
// node's file it prints the stream and ends, and refuses --follow.
func TestJournalNodeEventsFromACursor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	j, err := journal.Open(ctx, dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	const a, b = "8d0c4f3e-0000-4000-8000-00000000000a", "8d0c4f3e-0000-4000-8000-00000000000b"
	if err := j.Append(ctx, a, started(a, 1), started(a, 2)); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ctx, b, started(b, 1)); err != nil {
		t.Fatal(err)
	}
	l, err := journal.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = j.Serve(ctx, l) }()

	var out syncBuffer
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- runJournalCmd(fctx, &out, "events", "--follow", "--from", "2", "-o", "json", "--root-dir", dir)
	}()
	lines := func() []journal.EventLine {
		var ls []journal.EventLine
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var l journal.EventLine
			if json.Unmarshal([]byte(line), &l) == nil && l.Position != 0 {
				ls = append(ls, l)
			}
		}
		return ls
	}
	waitUntil(t, "positions 2 and 3", func() bool { return len(lines()) == 2 })
	if err := j.Append(ctx, a, started(a, 3)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the appended event", func() bool { return len(lines()) == 3 })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []struct {
		pos uint64
		pod string
		seq uint64
	}{{2, a, 2}, {3, b, 1}, {4, a, 3}}
	for i, l := range lines() {
		if l.Position != want[i].pos || l.Pod != want[i].pod || l.Seq != want[i].seq || l.Event != "ContainerStarted" {
			t.Fatalf("line %d: %+v, want %+v", i, l, want[i])
		}
	}
	if err := runJournalCmd(ctx, &out, "events", a, "--from", "2", "--root-dir", dir); err == nil ||
		!strings.Contains(err.Error(), "--from") {
		t.Fatalf("--from with a pod: %v", err)
	}

	// The stopped node's file.
	cancel()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	out = syncBuffer{}
	if err := runJournalCmd(context.Background(), &out, "events", "--from", "3", "--root-dir", dir); err != nil {
		t.Fatal(err)
	}
	if text := out.String(); strings.Count(text, "\n") != 2 || !strings.Contains(text, b) || !strings.Contains(text, "ContainerStarted") {
		t.Fatalf("events --from 3 on a stopped node: %q", text)
	}
	if err := runJournalCmd(context.Background(), &out, "events", "--follow", "--root-dir", dir); err == nil ||
		!strings.Contains(err.Error(), "no node is running") {
		t.Fatalf("--follow on a stopped node: %v", err)
	}
}
