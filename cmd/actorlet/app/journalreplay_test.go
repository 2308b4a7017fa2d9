package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/journal/replay/replaytest"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// wantExit checks that err is an exit with code.
func wantExit(t *testing.T, err error, code int, out string) {
	t.Helper()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != code {
		t.Fatalf("want exit code %d, got %v; output:\n%s", code, err, out)
	}
}

// squeeze collapses the runs of spaces of a table.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// On a stopped node's journal, a clean replay exits 0 with a table and the
// summary line; an altered snapshot exits 1 naming the pod, seq, field and
// both values, in text and in JSON.
func TestJournalReplay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	j := replaytest.Write(ctx, t, dir)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	var out syncBuffer
	if err := runJournalCmd(ctx, &out, "replay", "--root-dir", dir); err != nil {
		t.Fatalf("clean replay: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"default/compacted " + replaytest.Compacted + " snapshot at seq 6 (events 1-6 compacted) 4 2 Running ok",
		"note: the journal does not record reported statuses",
		"journal " + filepath.Join(dir, journal.FileName) + ": replayed 2 pods: 14 events folded, 3 snapshots compared, 0 divergences, 0 damaged\n",
	} {
		if !strings.Contains(squeeze(out.String()), want) {
			t.Fatalf("clean replay output lacks %q:\n%s", want, out.String())
		}
	}

	j, err := journal.Open(ctx, dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	replaytest.AlterSnapshot(ctx, t, j, func(st *pb.PodState) { st.Containers["app"].Id = "forged" })
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	out = syncBuffer{}
	err = runJournalCmd(ctx, &out, "replay", "--root-dir", dir)
	wantExit(t, err, 1, out.String())
	if !strings.Contains(out.String(), "DIVERGED (1)") ||
		!strings.Contains(out.String(), "divergence: pod default/compacted (uid "+replaytest.Compacted+`) seq 7: containers[app].id: folded "forged" vs stored "`+
			replaytest.Compacted+`-c1" (ContainerExited names another container ID)`) ||
		!strings.Contains(out.String(), "1 divergences, 0 damaged\n") {
		t.Fatalf("altered snapshot output:\n%s", out.String())
	}

	// One pod by name: the clean one exits 0.
	out = syncBuffer{}
	if err := runJournalCmd(ctx, &out, "replay", "--root-dir", dir, "default/plain"); err != nil ||
		!strings.Contains(out.String(), "replayed 1 pods: 10 events folded") {
		t.Fatalf("replay default/plain: %v\n%s", err, out.String())
	}

	out = syncBuffer{}
	err = runJournalCmd(ctx, &out, "replay", "--root-dir", dir, "-o", "json")
	wantExit(t, err, 1, out.String())
	var res struct {
		Pods []struct {
			UID         string `json:"uid"`
			Divergences []struct {
				Seq    uint64 `json:"seq"`
				Field  string `json:"field"`
				Folded string `json:"folded"`
				Stored string `json:"stored"`
			} `json:"divergences"`
		} `json:"pods"`
		Summary struct {
			Pods, Events, Snapshots, Divergences, Damaged int
		} `json:"summary"`
		Note string `json:"note"`
	}
	if err := json.NewDecoder(strings.NewReader(out.String())).Decode(&res); err != nil {
		t.Fatalf("replay -o json: %v\n%s", err, out.String())
	}
	if res.Summary.Pods != 2 || res.Summary.Divergences != 1 || res.Note == "" || len(res.Pods) != 2 {
		t.Fatalf("replay -o json: %+v", res)
	}
	for _, p := range res.Pods {
		if p.UID == replaytest.Compacted && (len(p.Divergences) != 1 || p.Divergences[0].Seq != 7 || p.Divergences[0].Field != "containers[app].id" ||
			p.Divergences[0].Folded != `"forged"`) {
			t.Fatalf("replay -o json divergences: %+v", p.Divergences)
		}
	}
}

// A record that fails its checksum is reported as damage and exits 1; the
// other pod is still replayed. --journal reads a file under any name.
func TestJournalReplayDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := replaytest.Write(ctx, t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	replaytest.FlipRecord(t, filepath.Join(dir, journal.FileName), replaytest.Plain, 3)
	other := filepath.Join(t.TempDir(), "node-a.db")
	data, err := os.ReadFile(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}

	var out syncBuffer
	err = runJournalCmd(ctx, &out, "replay", "--journal", other)
	wantExit(t, err, 1, out.String())
	for _, want := range []string{
		"<unknown> " + replaytest.Plain + " not folded: damaged 0 0 - DAMAGED (1)",
		"damage: pod " + replaytest.Plain + " seq 3: log record #3: record fails its checksum (CRC-32C)",
		"default/compacted",
		"journal " + other + ": replayed 2 pods: 4 events folded, 2 snapshots compared, 0 divergences, 1 damaged\n",
	} {
		if !strings.Contains(squeeze(out.String()), want) {
			t.Fatalf("damaged replay output lacks %q:\n%s", want, out.String())
		}
	}

	out = syncBuffer{}
	if err := runJournalCmd(ctx, &out, "replay", "--journal", other, "--root-dir", dir); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("--journal and --root-dir: %v", err)
	}
}

// On a running node (the file locked, the copy served on journal.sock),
// replay reads the copy and names the node's file.
func TestJournalReplayOnARunningNode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	j := replaytest.Write(ctx, t, dir)
	defer j.Close()
	l, err := journal.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = j.Serve(ctx, l) }()

	var out syncBuffer
	if err := runJournalCmd(ctx, &out, "replay", "--root-dir", dir); err != nil ||
		!strings.Contains(out.String(), "journal "+filepath.Join(dir, journal.FileName)+": replayed 2 pods: 14 events folded, 3 snapshots compared, 0 divergences, 0 damaged") {
		t.Fatalf("replay of a running node: %v\n%s", err, out.String())
	}
}
