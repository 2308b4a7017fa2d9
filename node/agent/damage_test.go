package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestDropDamaged: the streams LoadAll names damaged are deleted (their
// pods start a new stream at seq 1) and returned with what was wrong; a
// problem of the file as a whole is an error.
func TestDropDamaged(t *testing.T) {
	ctx := context.Background()
	j, err := journal.Open(ctx, t.TempDir(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, uid := range []string{"bad", "good"} {
		env := &pb.Envelope{Seq: 1, PodUid: uid, Event: &pb.Event{Kind: &pb.Event_PodRemoved{PodRemoved: &pb.PodRemoved{}}}}
		if err := j.Append(ctx, uid, env); err != nil {
			t.Fatal(err)
		}
	}
	ce := &journal.CorruptError{Path: j.Path(), Problems: []journal.Problem{{PodUID: "bad", Seq: 1, Detail: "checksum mismatch"}}}
	damaged, err := dropDamaged(ctx, j, ce, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := damaged["bad"]; len(damaged) != 1 || !strings.Contains(got, "record 1") || !strings.Contains(got, "checksum mismatch") {
		t.Errorf("damaged = %v, want bad: record 1: checksum mismatch", damaged)
	}
	if _, err := j.Load(ctx, "bad"); !errors.Is(err, journal.ErrNotFound) {
		t.Errorf("the damaged stream is still stored: %v", err)
	}
	if _, err := j.Load(ctx, "good"); err != nil {
		t.Errorf("the sound stream was touched: %v", err)
	}

	fileWide := &journal.CorruptError{Path: j.Path(), Problems: []journal.Problem{{Detail: "undecodable record header"}}}
	if _, err := dropDamaged(ctx, j, fileWide, zaptest.NewLogger(t)); !errors.Is(err, fileWide) {
		t.Errorf("a problem of the whole file: %v, want it returned", err)
	}
}

// TestJournalHealth: failing from a pod's first failed append until its
// next successful one, naming the journal.
func TestJournalHealth(t *testing.T) {
	h := newJournalHealth("/var/lib/actorlet/journal.db")
	if err := h.Err(); err != nil {
		t.Fatalf("healthy journal: %v", err)
	}
	h.AppendFailed("uid-1", errors.New("no space left on device"))
	h.AppendFailed("uid-2", errors.New("no space left on device"))
	err := h.Err()
	if err == nil || !strings.Contains(err.Error(), "journal /var/lib/actorlet/journal.db") || !strings.Contains(err.Error(), "2 pod(s)") {
		t.Fatalf("failing journal: %v", err)
	}
	h.AppendSucceeded("uid-1")
	h.AppendSucceeded("uid-2")
	if err := h.Err(); err != nil {
		t.Fatalf("healthy again: %v", err)
	}
}
