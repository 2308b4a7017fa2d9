package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// collect follows j from position from until n records were handed out.
func collect(t *testing.T, ctx context.Context, j *Journal, from uint64, n int) []Record {
	t.Helper()
	var got []Record
	stop := errors.New("enough")
	err := j.Follow(ctx, from, func(r Record) error {
		got = append(got, r)
		if len(got) == n {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Follow: %v after %d records, want %d", err, len(got), n)
	}
	return got
}

func TestFollowHandsOutEveryRecordOnceInOrderWhileWritersAppend(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	const pods, perPod = 8, 40
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []Record
	done := make(chan struct{})
	go func() { // started before the writers: it waits for their commits
		defer close(done)
		got = collect(t, ctx, j, 0, pods*perPod)
	}()
	var wg sync.WaitGroup
	for p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := fmt.Sprintf("pod-%d", p)
			for seq := uint64(1); seq <= perPod; seq++ {
				if err := j.Append(ctx, uid, ev(uid, seq)); err != nil {
					t.Errorf("Append %s %d: %v", uid, seq, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	<-done
	last := map[string]uint64{}
	for i, r := range got {
		if r.Position != uint64(i+1) {
			t.Fatalf("record %d has position %d: want every position once, in order", i, r.Position)
		}
		if r.Damage != "" || r.Envelope == nil || r.Envelope.PodUid != r.PodUID || r.Envelope.Seq != r.Seq {
			t.Fatalf("record %d: %+v", i, r)
		}
		if r.Seq != last[r.PodUID]+1 {
			t.Fatalf("pod %s: seq %d after %d", r.PodUID, r.Seq, last[r.PodUID])
		}
		last[r.PodUID] = r.Seq
	}
	if len(last) != pods {
		t.Fatalf("records of %d pods, want %d", len(last), pods)
	}
}

func TestRecordsResumeFromACursor(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	appendT(t, j, "a", evs("a", 1, 4)...)
	appendT(t, j, "b", evs("b", 1, 3)...)
	appendT(t, j, "a", evs("a", 5, 3)...)
	var positions []uint64
	err := j.Records(context.Background(), 6, func(r Record) error {
		positions = append(positions, r.Position)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(positions) != "[6 7 8 9 10]" {
		t.Fatalf("Records from 6: positions %v, want [6 7 8 9 10]", positions)
	}
	// A failing handler stops Records with its error, naming the record.
	boom := errors.New("boom")
	err = j.Records(context.Background(), 1, func(r Record) error {
		if r.Position == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Records with a failing handler: %v, want boom", err)
	}
	mustContain(t, err, "#3", `pod "a" seq 3`)
}

// A cursor stays valid across restarts: the numbers of records deleted at the
// end of the log (a snapshot's compaction, a deleted pod) are not handed out
// again, or a handler whose cursor is past them would miss the new records.
func TestRecordNumbersAreNeverUsedTwiceAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	appendT(t, j, "a", evs("a", 1, 3)...)
	appendT(t, j, "b", evs("b", 1, 2)...) // positions 4, 5
	if err := j.Delete(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)
	j = openT(t, dir, testOptions(t))
	appendT(t, j, "c", ev("c", 1))
	var got []Record
	if err := j.Records(context.Background(), 4, func(r Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PodUID != "c" || got[0].Position != 6 {
		t.Fatalf("after deleting the records at 4 and 5 and a restart, the next record is %+v; want pod c at 6", got)
	}
	if err := j.Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestFollowEndsWithErrClosedWhenTheJournalCloses(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	appendT(t, j, "a", ev("a", 1))
	errc := make(chan error, 1)
	seen := make(chan struct{}, 1)
	go func() {
		errc <- j.Follow(context.Background(), 1, func(Record) error { seen <- struct{}{}; return nil })
	}()
	<-seen // it has read the log and waits for commits
	closeT(t, j)
	select {
	case err := <-errc:
		wantErrIs(t, err, ErrClosed)
	case <-time.After(time.Minute):
		t.Fatal("Follow did not return after Close")
	}
}

func TestFollowOnAReadOnlyJournalEndsAtTheLastRecord(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	appendT(t, j, "a", evs("a", 1, 2)...)
	closeT(t, j)
	ro, err := OpenReadOnly(context.Background(), dir, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	n := 0
	if err := ro.Follow(context.Background(), 0, func(Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("Follow on a read-only journal handed out %d records, want 2", n)
	}
}
