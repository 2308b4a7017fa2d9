package journal

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A journal held by another process: Open gives up after OpenTimeout with
// ErrLocked naming the holder, and succeeds once the holder is gone.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd, stdin, lines := startHelper(t, roleHold, dir)
	line, ok := nextLine(t, lines)
	if !ok || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("helper said %q, want ready", line)
	}

	opts := testOptions(t)
	opts.OpenTimeout = 100 * time.Millisecond
	start := time.Now()
	_, err := Open(context.Background(), dir, opts)
	elapsed := time.Since(start)
	wantErrIs(t, err, ErrLocked)
	mustContain(t, err, dir, "locked by another actorlet process")
	if runtime.GOOS == "linux" {
		mustContain(t, err, fmt.Sprintf("pid %d", cmd.Process.Pid))
	}
	if elapsed > 5*time.Second {
		t.Fatalf("Open took %v to report the lock", elapsed)
	}
	_, err = OpenReadOnly(context.Background(), dir, opts)
	wantErrIs(t, err, ErrLocked)
	if q := quarantinedFiles(t, dir); q != nil {
		t.Fatalf("a locked journal was quarantined: %v", q)
	}

	_ = stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	j := openT(t, dir, opts)
	if j.Quarantined() != nil {
		t.Fatal(j.Quarantined())
	}
}

// flock locks belong to the open file, so a second Open in the same process
// conflicts too.
func TestOpenLockedInSameProcess(t *testing.T) {
	dir := t.TempDir()
	openT(t, dir, testOptions(t))
	_, err := Open(context.Background(), dir, testOptions(t))
	wantErrIs(t, err, ErrLocked)
	if runtime.GOOS == "linux" {
		mustContain(t, err, fmt.Sprintf("pid %d: this process", os.Getpid()))
	}
}

// A writer killed with SIGKILL in the middle of its appends: every Append
// that returned is in the file, no call is stored in part, and the journal
// verifies and continues.
func TestKilledWriterLosesNoAcknowledgedAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[string]uint64{}
	for round := range 3 {
		cmd, _, lines := startHelper(t, roleAppendLoop, dir)
		n := 0
		killed := false
		for {
			line, ok := nextLine(t, lines)
			if !ok {
				break
			}
			var uid string
			var seq uint64
			if _, err := fmt.Sscanf(line, "ack %s %d", &uid, &seq); err != nil {
				t.Fatalf("helper printed %q: %v", line, err)
			}
			if seq <= acked[uid] {
				t.Fatalf("round %d: ack of %s seq %d after seq %d", round, uid, seq, acked[uid])
			}
			acked[uid] = seq
			// Acks printed before the kill still count: those appends
			// returned.
			if n++; n == 200+137*round && !killed {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !killed || !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: helper ended with %v before it was killed", round, err)
		}

		j, err := Open(context.Background(), dir, testOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		if q := j.Quarantined(); q != nil {
			t.Fatalf("round %d: journal was quarantined after a kill: %v", round, q)
		}
		if err := j.Verify(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		all, err := j.LoadAll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for p := range killPods {
			uid := fmt.Sprintf("kill-%d", p)
			s := all[uid]
			if s == nil || s.LastSeq() < acked[uid] {
				t.Fatalf("round %d: pod %s has seqs up to %d, but %d was acknowledged", round, uid, s.LastSeq(), acked[uid])
			}
			checkWholeCalls(t, s)
		}
		t.Logf("round %d: %d acks; acknowledged %v", round, n, acked)
		closeT(t, j)
	}
}

// checkWholeCalls checks that the stream holds gapless seqs from 1 and every
// Append call of the append-loop helper entirely: events name their call's
// first seq and size.
func checkWholeCalls(t *testing.T, s *Stream) {
	t.Helper()
	for i, e := range s.Events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		c := e.Event.GetContainerCreated()
		var first uint64
		if _, err := fmt.Sscan(c.GetName(), &first); err != nil {
			t.Fatalf("seq %d: event %v does not name its call: %v", e.Seq, e, err)
		}
		if last := first + uint64(c.GetAttempt()) - 1; last > s.LastSeq() {
			t.Fatalf("seq %d belongs to a call of seqs %d..%d, but the stream ends at %d: a call was stored in part",
				e.Seq, first, last, s.LastSeq())
		}
	}
}
