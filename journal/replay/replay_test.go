package replay_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/journal/replay"
	"github.com/actorlet/actorlet/journal/replay/replaytest"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// reopen closes the journal in dir and opens it read-only, as `actorlet
// journal replay` does on a stopped node.
func reopen(ctx context.Context, t *testing.T, dir string, j *journal.Journal) *journal.Journal {
	t.Helper()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := journal.OpenReadOnly(ctx, dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	return ro
}

func run(ctx context.Context, t *testing.T, j *journal.Journal, refs ...string) *replay.Report {
	t.Helper()
	r, err := replay.Journal(ctx, j, refs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pod(t *testing.T, r *replay.Report, uid string) replay.Pod {
	t.Helper()
	for _, p := range r.Pods {
		if p.UID == uid {
			return p
		}
	}
	t.Fatalf("pod %s not in the report: %+v", uid, r.Pods)
	return replay.Pod{}
}

// A journal the core wrote (one pod from seq 1, one from a snapshot)
// replays without divergence, and the report counts what was folded and
// compared.
func TestCleanJournalHasNoDivergence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := reopen(ctx, t, dir, replaytest.Write(ctx, t, dir))
	r := run(ctx, t, j)
	if !r.Clean() {
		t.Fatalf("a clean journal: %+v", r)
	}
	want := replay.Summary{Pods: 2, Events: replaytest.Events + replaytest.Events - replaytest.SnapshotSeq, Snapshots: 3}
	if r.Summary != want {
		t.Fatalf("summary %+v, want %+v", r.Summary, want)
	}
	plain, compacted := pod(t, r, replaytest.Plain), pod(t, r, replaytest.Compacted)
	if plain.Name != "default/plain" || plain.From != "seq 1" || plain.LastSeq != replaytest.Events || plain.Phase != "Running" {
		t.Fatalf("plain: %+v", plain)
	}
	if compacted.SnapshotSeq != replaytest.SnapshotSeq || !strings.Contains(compacted.From, "events 1-6 compacted") ||
		compacted.Events != replaytest.Events-replaytest.SnapshotSeq || compacted.LastSeq != replaytest.Events {
		t.Fatalf("compacted: %+v", compacted)
	}
	if got := r.Summary.String(); got != "replayed 2 pods: 14 events folded, 3 snapshots compared, 0 divergences, 0 damaged" {
		t.Fatalf("summary line %q", got)
	}

	// One pod by name, one by UID.
	if r := run(ctx, t, j, "plain"); len(r.Pods) != 1 || r.Pods[0].UID != replaytest.Plain {
		t.Fatalf("replay plain: %+v", r.Pods)
	}
	if r := run(ctx, t, j, replaytest.Compacted); len(r.Pods) != 1 || r.Pods[0].Name != "default/compacted" {
		t.Fatalf("replay by UID: %+v", r.Pods)
	}
	if _, err := replay.Journal(ctx, j, []string{"kube-system/nope"}); !errors.Is(err, replay.ErrUnknownPod) {
		t.Fatalf("an unknown pod: %v", err)
	}
}

// A snapshot whose field was altered (stored with the journal's own API, so
// it is sound to Verify) is caught at the first event that depends on the
// field, which is named with both values.
func TestAlteredSnapshotIsNamed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := replaytest.Write(ctx, t, dir)
	replaytest.AlterSnapshot(ctx, t, j, func(st *pb.PodState) { st.Containers["app"].Id = "forged" })
	if err := j.Verify(ctx); err != nil {
		t.Fatalf("the altered journal is not damaged: %v", err)
	}
	r := run(ctx, t, reopen(ctx, t, dir, j))
	if r.Summary.Divergences != 1 || r.Summary.Damaged != 0 || r.Clean() {
		t.Fatalf("summary %+v, want 1 divergence", r.Summary)
	}
	if p := pod(t, r, replaytest.Plain); len(p.Divergences) != 0 {
		t.Fatalf("the other pod: %v", p.Divergences)
	}
	d := pod(t, r, replaytest.Compacted).Divergences[0]
	want := replay.Divergence{PodUID: replaytest.Compacted, Pod: "default/compacted", Seq: replaytest.SnapshotSeq + 1,
		Field: "containers[app].id", Folded: `"forged"`, Stored: `"` + replaytest.Compacted + `-c1"`}
	if d.PodUID != want.PodUID || d.Pod != want.Pod || d.Seq != want.Seq || d.Field != want.Field || d.Folded != want.Folded || d.Stored != want.Stored {
		t.Fatalf("divergence %+v, want %+v", d, want)
	}
	if s := d.String(); !strings.Contains(s, "default/compacted") || !strings.Contains(s, "seq 7: containers[app].id") {
		t.Fatalf("divergence text %q", s)
	}
}

// A snapshot that contradicts its own record is named too.
func TestSnapshotAgainstItsRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := replaytest.Write(ctx, t, dir)
	replaytest.AlterSnapshot(ctx, t, j, func(st *pb.PodState) { st.Containers["app"].Name = "web" })
	r := run(ctx, t, reopen(ctx, t, dir, j))
	ds := pod(t, r, replaytest.Compacted).Divergences
	if len(ds) != 1 || ds[0].Seq != replaytest.SnapshotSeq || ds[0].Field != "containers[app].name" || ds[0].Stored != `"web"` {
		t.Fatalf("divergences %+v", ds)
	}
}

// A record that fails its checksum is damage, not divergence: its pod is
// reported with the damaged seq and not folded, the other pod is replayed.
func TestDamagedRecordIsDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := replaytest.Write(ctx, t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	replaytest.FlipRecord(t, filepath.Join(dir, journal.FileName), replaytest.Plain, 3)

	j, err := journal.OpenReadOnly(ctx, dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r := run(ctx, t, j)
	if r.Summary.Damaged != 1 || r.Summary.Divergences != 0 || r.Summary.Pods != 2 || r.Clean() {
		t.Fatalf("summary %+v, want 1 damaged", r.Summary)
	}
	p := pod(t, r, replaytest.Plain)
	if len(p.Damage) != 1 || p.Damage[0].Seq != 3 || !strings.Contains(p.Damage[0].Detail, "checksum") || p.Events != 0 {
		t.Fatalf("damaged pod: %+v", p)
	}
	if c := pod(t, r, replaytest.Compacted); c.Events != replaytest.Events-replaytest.SnapshotSeq || len(c.Damage) != 0 {
		t.Fatalf("the other pod: %+v", c)
	}
	// A damaged pod is named by its UID only.
	if r := run(ctx, t, j, replaytest.Plain); len(r.Pods) != 1 || len(r.Pods[0].Damage) != 1 {
		t.Fatalf("the damaged pod by UID: %+v", r.Pods)
	}
}

// Each event that Apply would pass over is named at its seq, with the field
// it contradicts.
func TestEventsThatDoNotFit(t *testing.T) {
	h := replaytest.History(t, "u", "default", "p")
	for _, tc := range []struct {
		name  string
		event *pb.Event
		field string
	}{
		{"sandbox removed", &pb.Event{Kind: &pb.Event_SandboxRemoved{SandboxRemoved: &pb.SandboxRemoved{SandboxId: "other"}}}, "sandbox.id"},
		{"sandbox created", &pb.Event{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{Attempt: 3, SandboxId: "x"}}}, "sandbox.attempt"},
		{"container created", &pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app", Attempt: 9, ContainerId: "x"}}}, "containers[app].attempt"},
		{"container started", &pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app", Attempt: 2, ContainerId: "u-c2"}}}, "containers[app].phase"},
		{"unknown container", &pb.Event{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{Name: "web", ContainerId: "x"}}}, "containers[web]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append(h[:len(h):len(h)], &pb.Envelope{Seq: uint64(len(h) + 1), PodUid: "u", Event: tc.event})
			p := replay.Fold("u", nil, events)
			if len(p.Divergences) != 1 || p.Divergences[0].Seq != uint64(len(h)+1) || p.Divergences[0].Field != tc.field {
				t.Fatalf("divergences %+v, want one of %s at seq %d", p.Divergences, tc.field, len(h)+1)
			}
		})
	}
	if p := replay.Fold("u", nil, h); len(p.Divergences) != 0 || p.Events != len(h) {
		t.Fatalf("the history alone: %+v", p)
	}
}
