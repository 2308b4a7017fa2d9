package journal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
	"pgregory.net/rapid"
)

// The index that Open rebuilds from the file is the one the writer kept up
// to date, and both are what was appended: seqs per pod in append order,
// under log keys that grow in commit order.
func TestIndexRebuiltAfterReopen(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	want := map[string][]uint64{} // pod → seqs stored
	last := map[string]uint64{}
	add := func(uid string, n int) {
		appendT(t, j, uid, evs(uid, last[uid]+1, n)...)
		for range n {
			last[uid]++
			want[uid] = append(want[uid], last[uid])
		}
	}
	for round := range 20 {
		for p := range 7 {
			uid := fmt.Sprintf("pod-%d", p)
			add(uid, 1+(round+p)%3)
		}
	}
	// Compaction keeps the records after the snapshot; Delete drops all.
	if err := j.SaveSnapshot(ctx, snapshotAt("pod-2", 10)); err != nil {
		t.Fatal(err)
	}
	want["pod-2"] = slices.DeleteFunc(want["pod-2"], func(seq uint64) bool { return seq <= 10 })
	if err := j.Delete(ctx, "pod-5"); err != nil {
		t.Fatal(err)
	}
	delete(want, "pod-5")
	delete(last, "pod-5")
	add("pod-5", 2)
	add("pod-0", 1)

	before := cloneIndex(&j.idx.podIndex)
	checkIndex(t, &before, want)
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)

	// The file holds the same, read without the journal's code.
	stored := storedRecords(t, dir)
	if len(stored) != len(before.pods) {
		t.Fatalf("file holds records of %d pods, the index %d", len(stored), len(before.pods))
	}
	for uid, e := range before.pods {
		if !slices.Equal(stored[uid], e.recs) {
			t.Fatalf("pod %s: file holds (seq, key) %v, the index %v", uid, stored[uid], e.recs)
		}
	}

	j = openT(t, dir, testOptions(t))
	after := cloneIndex(&j.idx.podIndex)
	if d := before.diff(&after); d != "" {
		t.Fatalf("index after reopen differs: %s", d)
	}
	checkIndex(t, &after, want)
	// New records continue after the last one.
	appendT(t, j, "pod-1", ev("pod-1", last["pod-1"]+1))
	recs := j.idx.pods["pod-1"].recs
	if got := recs[len(recs)-1].key; got != after.lastKey+1 {
		t.Fatalf("next record got key %d, want %d", got, after.lastKey+1)
	}
}

// checkIndex checks that x holds exactly the pods of want with those seqs,
// under increasing keys.
func checkIndex(t *testing.T, x *podIndex, want map[string][]uint64) {
	t.Helper()
	if got := slices.Sorted(maps.Keys(x.pods)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("index has pods %v, want %v", got, slices.Sorted(maps.Keys(want)))
	}
	var keys []uint64
	n := 0
	for uid, e := range x.pods {
		var seqs []uint64
		for i, r := range e.recs {
			seqs = append(seqs, r.seq)
			if i > 0 && r.key <= e.recs[i-1].key {
				t.Fatalf("pod %s: keys not increasing: %v", uid, e.recs)
			}
			keys = append(keys, r.key)
		}
		if !slices.Equal(seqs, want[uid]) {
			t.Fatalf("pod %s: index has seqs %v, want %v", uid, seqs, want[uid])
		}
		n += len(e.recs)
	}
	if n != x.records {
		t.Fatalf("index counts %d records, holds %d", x.records, n)
	}
	slices.Sort(keys)
	if len(slices.Compact(keys)) != n {
		t.Fatal("two records share a key")
	}
}

func cloneIndex(x *podIndex) podIndex {
	c := *x
	c.pods = make(map[string]*podEntry, len(x.pods))
	for uid, e := range x.pods {
		ce := *e
		ce.recs = slices.Clone(e.recs)
		c.pods[uid] = &ce
	}
	return c
}

func TestLoadAfterSnapshotAndMoreAppends(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	// Interleaved with another pod, so that p's records are not adjacent.
	for seq := uint64(1); seq <= 5; seq++ {
		appendT(t, j, "p", ev("p", seq))
		appendT(t, j, "q", ev("q", seq))
	}
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 3)); err != nil {
		t.Fatal(err)
	}
	appendT(t, j, "p", evs("p", 6, 3)...)
	appendT(t, j, "q", ev("q", 6))
	appendT(t, j, "p", ev("p", 9))

	check := func(j *Journal) {
		t.Helper()
		s := loadT(t, j, "p")
		if s.Snapshot.GetSeq() != 3 {
			t.Fatalf("snapshot %v, want seq 3", s.Snapshot)
		}
		wantSeqs(t, s, "p", 4, 9)
		wantSeqs(t, loadT(t, j, "q"), "q", 1, 6)
		all, err := j.LoadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if all["p"].Snapshot.GetSeq() != 3 {
			t.Fatalf("LoadAll: snapshot %v, want seq 3", all["p"].Snapshot)
		}
		wantSeqs(t, all["p"], "p", 4, 9)
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	closeT(t, j)
	if got := storedSeqs(t, dir, "p"); !slices.Equal(got, []uint64{4, 5, 6, 7, 8, 9}) {
		t.Fatalf("records of p in the file: %v, want 4..9", got)
	}
	j = openT(t, dir, testOptions(t))
	check(j)
	// A second snapshot compacts the records appended after the first.
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 8)); err != nil {
		t.Fatal(err)
	}
	s := loadT(t, j, "p")
	if s.Snapshot.GetSeq() != 8 {
		t.Fatalf("snapshot %v, want seq 8", s.Snapshot)
	}
	wantSeqs(t, s, "p", 9, 9)
}

// After Delete, the UID starts a new stream at seq 1, and nothing of the old
// one comes back, also after a reopen.
func TestDeleteThenSameUIDStartsAtOne(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	appendT(t, j, "p", evs("p", 1, 6)...)
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 2)); err != nil {
		t.Fatal(err)
	}
	appendT(t, j, "other", evs("other", 1, 2)...)
	if err := j.Delete(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, j.Append(ctx, "p", ev("p", 7)), ErrSequence)
	appendT(t, j, "p", evs("p", 1, 3)...)

	check := func(j *Journal) {
		t.Helper()
		s := loadT(t, j, "p")
		if s.Snapshot != nil {
			t.Fatalf("the deleted pod's snapshot came back: %v", s.Snapshot)
		}
		wantSeqs(t, s, "p", 1, 3)
		wantSeqs(t, loadT(t, j, "other"), "other", 1, 2)
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	closeT(t, j)
	if got := storedSeqs(t, dir, "p"); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("records of p in the file: %v, want 1..3", got)
	}
	j = openT(t, dir, testOptions(t))
	check(j)
	appendT(t, j, "p", ev("p", 4))
	wantSeqs(t, loadT(t, j, "p"), "p", 1, 4)
}

// Requests for the same pods within one transaction see each other: a
// snapshot compacts records appended before it in the batch, an append after
// a delete starts at 1.
func TestBatchOfDependentRequests(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	appendT(t, j, "q", evs("q", 1, 4)...)
	closeT(t, j)

	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	j = openT(t, dir, opts)
	release := holdWriter(t, j, gate)

	type call struct {
		name string
		do   func() error
		want error
	}
	calls := []call{
		{"append p 1..3", func() error { return j.Append(ctx, "p", evs("p", 1, 3)...) }, nil},
		{"snapshot p at 2", func() error { return j.SaveSnapshot(ctx, snapshotAt("p", 2)) }, nil},
		{"append p 4", func() error { return j.Append(ctx, "p", ev("p", 4)) }, nil},
		{"snapshot p at 5", func() error { return j.SaveSnapshot(ctx, snapshotAt("p", 5)) }, ErrSequence},
		{"delete q", func() error { return j.Delete(ctx, "q") }, nil},
		{"append q 5", func() error { return j.Append(ctx, "q", ev("q", 5)) }, ErrSequence},
		{"append q 1", func() error { return j.Append(ctx, "q", ev("q", 1)) }, nil},
		{"append r 1", func() error { return j.Append(ctx, "r", ev("r", 1)) }, nil},
		{"snapshot r at 1", func() error { return j.SaveSnapshot(ctx, snapshotAt("r", 1)) }, nil},
		{"append r 2", func() error { return j.Append(ctx, "r", ev("r", 2)) }, nil},
		{"delete s", func() error { return j.Delete(ctx, "s") }, nil},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { errs[i] = c.do() })
		// Queue them in order.
		eventually(t, c.name+" queued", func() bool { return j.queue.length() == i+1 })
	}
	release()
	wg.Wait()
	for i, c := range calls {
		if !errors.Is(errs[i], c.want) || (c.want == nil && errs[i] != nil) {
			t.Errorf("%s: %v, want %v", c.name, errs[i], c.want)
		}
	}
	if st := j.Stats(); st.Commits != 2 {
		t.Fatalf("stats %+v: want the batch in one commit (after the gate-keeper's)", st)
	}
	check := func(j *Journal) {
		t.Helper()
		p := loadT(t, j, "p")
		if p.Snapshot.GetSeq() != 2 {
			t.Fatalf("p: snapshot %v, want seq 2", p.Snapshot)
		}
		wantSeqs(t, p, "p", 3, 4)
		wantSeqs(t, loadT(t, j, "q"), "q", 1, 1)
		r := loadT(t, j, "r")
		if r.Snapshot.GetSeq() != 1 {
			t.Fatalf("r: snapshot %v, want seq 1", r.Snapshot)
		}
		wantSeqs(t, r, "r", 2, 2)
		pods, err := j.Pods(ctx)
		if err != nil || !slices.Equal(pods, []string{"gate-keeper", "p", "q", "r"}) {
			t.Fatalf("Pods = %v, %v", pods, err)
		}
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	closeT(t, j)
	j = openT(t, dir, testOptions(t))
	check(j)
}

// Loads running alongside appends, snapshots and deletes never see a
// damaged stream, and always see every append that has returned.
func TestLoadDuringWrites(t *testing.T) {
	opts := testOptions(t)
	opts.NoSync = true
	opts.Logger = zap.NewNop()
	j := openT(t, t.TempDir(), opts)
	ctx := context.Background()
	const pods, appends = 8, 300
	acked := make([]atomic.Uint64, pods)
	var (
		wg      sync.WaitGroup
		writing atomic.Int32
		failed  atomic.Bool
	)
	fail := func(format string, args ...any) {
		failed.Store(true)
		t.Errorf(format, args...)
	}
	for p := range pods {
		writing.Add(1)
		wg.Go(func() {
			defer writing.Add(-1)
			uid := fmt.Sprintf("p%d", p)
			for seq := uint64(1); seq <= appends && !failed.Load(); seq++ {
				if err := j.Append(ctx, uid, ev(uid, seq)); err != nil {
					fail("append %s %d: %v", uid, seq, err)
					return
				}
				acked[p].Store(seq)
				if seq%7 == 0 {
					if err := j.SaveSnapshot(ctx, snapshotAt(uid, seq-2)); err != nil {
						fail("snapshot %s %d: %v", uid, seq-2, err)
						return
					}
				}
			}
		})
	}
	// A pod deleted and re-created over and over.
	writing.Add(1)
	wg.Go(func() {
		defer writing.Add(-1)
		for range 100 {
			if err := j.Append(ctx, "churn", evs("churn", 1, 3)...); err != nil {
				fail("append churn: %v", err)
				return
			}
			if err := j.Delete(ctx, "churn"); err != nil {
				fail("delete churn: %v", err)
				return
			}
		}
	})
	for r := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for writing.Load() > 0 && !failed.Load() {
				if rng.IntN(pods+1) == pods {
					s, err := j.Load(ctx, "churn")
					if err != nil && !errors.Is(err, ErrNotFound) {
						fail("load churn: %v", err)
					}
					if err == nil && s.LastSeq() != 3 {
						fail("churn has seqs %v, want 1..3", seqsOf(s))
					}
					continue
				}
				p := rng.IntN(pods)
				uid := fmt.Sprintf("p%d", p)
				min := acked[p].Load()
				s, err := j.Load(ctx, uid)
				switch {
				case errors.Is(err, ErrNotFound) && min == 0:
				case err != nil:
					fail("load %s: %v", uid, err)
				case s.LastSeq() < min:
					fail("load %s: last seq %d, but %d was acknowledged", uid, s.LastSeq(), min)
				}
			}
		})
	}
	wg.Wait()
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// A property test against a model: after any sequence of appends (valid or
// not), snapshots, deletes and reopens, every pod loads as the model says,
// Pods lists the model's pods, and Verify (which compares the index with the
// file) passes.
func TestJournalMatchesModel(t *testing.T) {
	base := t.TempDir()
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		dir, err := os.MkdirTemp(base, "case")
		if err != nil {
			rt.Fatal(err)
		}
		opts := Options{Logger: zap.NewNop(), NoSync: true, Clock: testOptions(t).Clock}
		ctx := context.Background()
		j, err := Open(ctx, dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { _ = j.Close() }()

		type pod struct{ snap, last uint64 }
		model := map[string]*pod{}
		uids := rapid.SampledFrom([]string{"a", "b", "c", "d"})
		get := func(uid string) *pod {
			if model[uid] == nil {
				model[uid] = &pod{}
			}
			return model[uid]
		}
		rt.Repeat(map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				uid := uids.Draw(rt, "uid")
				p := get(uid)
				n := rapid.IntRange(1, 3).Draw(rt, "n")
				first := p.last + 1
				valid := rapid.IntRange(0, 4).Draw(rt, "valid") > 0
				if !valid {
					first = rapid.SampledFrom([]uint64{p.last, p.last + 2, 1}).Filter(func(s uint64) bool {
						return s != p.last+1 && s > 0
					}).Draw(rt, "first")
				}
				err := j.Append(ctx, uid, evs(uid, first, n)...)
				if valid {
					if err != nil {
						rt.Fatalf("append %s %d..: %v", uid, first, err)
					}
					p.last += uint64(n)
				} else if !errors.Is(err, ErrSequence) {
					rt.Fatalf("append %s from %d after %d: %v, want ErrSequence", uid, first, p.last, err)
				}
			},
			"snapshot": func(rt *rapid.T) {
				uid := uids.Draw(rt, "uid")
				p := get(uid)
				if p.last == 0 {
					wantErrIsT(rt, j.SaveSnapshot(ctx, snapshotAt(uid, 1)), ErrSequence)
					return
				}
				seq := rapid.Uint64Range(max(p.snap, 1), p.last+1).Draw(rt, "seq")
				err := j.SaveSnapshot(ctx, snapshotAt(uid, seq))
				if seq > p.last {
					wantErrIsT(rt, err, ErrSequence)
					return
				}
				if err != nil {
					rt.Fatalf("snapshot %s at %d: %v", uid, seq, err)
				}
				p.snap = seq
			},
			"delete": func(rt *rapid.T) {
				uid := uids.Draw(rt, "uid")
				if err := j.Delete(ctx, uid); err != nil {
					rt.Fatal(err)
				}
				delete(model, uid)
			},
			"reopen": func(rt *rapid.T) {
				if err := j.Close(); err != nil {
					rt.Fatal(err)
				}
				if j, err = Open(ctx, dir, opts); err != nil {
					rt.Fatal(err)
				}
			},
			"": func(rt *rapid.T) {
				var want []string
				for uid, p := range model {
					if p.last > 0 {
						want = append(want, uid)
					}
				}
				slices.Sort(want)
				if got, err := j.Pods(ctx); err != nil || !slices.Equal(got, want) {
					rt.Fatalf("Pods = %v, %v; want %v", got, err, want)
				}
				for _, uid := range want {
					p := model[uid]
					s, err := j.Load(ctx, uid)
					if err != nil {
						rt.Fatalf("load %s: %v", uid, err)
					}
					if s.Snapshot.GetSeq() != p.snap || s.LastSeq() != p.last || uint64(len(s.Events)) != p.last-p.snap {
						rt.Fatalf("pod %s: snapshot at %d, seqs %v; want snapshot at %d, seqs up to %d",
							uid, s.Snapshot.GetSeq(), seqsOf(s), p.snap, p.last)
					}
				}
				if err := j.Verify(ctx); err != nil {
					rt.Fatal(err)
				}
			},
		})
	})
	t.Logf("%d cases", cases)
}

func wantErrIsT(t *rapid.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// A failed commit of a batch that snapshots and deletes (which change the
// index in place) leaves the index and the file as they were.
func TestFailedCommitWithSnapshotAndDeleteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	appendT(t, j, "p", evs("p", 1, 4)...)
	appendT(t, j, "q", evs("q", 1, 2)...)
	closeT(t, j)

	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	opts.maxSize = 1 << 20
	j = openT(t, dir, opts)
	ctx := context.Background()
	release := holdWriter(t, j, gate)

	huge := ev("huge", 1)
	huge.Event.GetContainerStarted().ContainerId = string(make([]byte, 2<<20))
	calls := []func() error{
		func() error { return j.Append(ctx, "p", ev("p", 5)) },
		func() error { return j.SaveSnapshot(ctx, snapshotAt("p", 3)) },
		func() error { return j.Delete(ctx, "q") },
		func() error { return j.Append(ctx, "q", ev("q", 1)) },
		func() error { return j.Append(ctx, "new", ev("new", 1)) },
		func() error { return j.Append(ctx, "huge", huge) },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		eventually(t, fmt.Sprintf("call %d queued", i), func() bool { return j.queue.length() == i+1 })
	}
	// The gate-keeper's commit goes first, then the six calls fail as one.
	release()
	wg.Wait()
	for i, err := range errs {
		wantErrIs(t, err, berrors.ErrMaxSizeReached)
		if errors.Is(err, ErrSequence) {
			t.Fatalf("call %d was rejected: %v", i, err)
		}
	}
	if st := j.Stats(); st.FailedCommits != 1 || st.Commits != 1 {
		t.Fatalf("stats %+v, want the gate-keeper's commit and one failed commit", st)
	}
	check := func(j *Journal) {
		t.Helper()
		wantSeqs(t, loadT(t, j, "p"), "p", 1, 4)
		if s := loadT(t, j, "p"); s.Snapshot != nil {
			t.Fatalf("p has the snapshot of the failed commit: %v", s.Snapshot)
		}
		wantSeqs(t, loadT(t, j, "q"), "q", 1, 2)
		if pods, err := j.Pods(ctx); err != nil || !slices.Equal(pods, []string{"gate-keeper", "p", "q"}) {
			t.Fatalf("Pods = %v, %v", pods, err)
		}
		for _, uid := range []string{"new", "huge"} {
			if _, err := j.Load(ctx, uid); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Load(%s) = %v, want ErrNotFound", uid, err)
			}
		}
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	// And the journal goes on from there.
	appendT(t, j, "p", ev("p", 5))
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 3)); err != nil {
		t.Fatal(err)
	}
	closeT(t, j)
	j = openT(t, dir, testOptions(t))
	if s := loadT(t, j, "p"); s.Snapshot.GetSeq() != 3 {
		t.Fatalf("p: snapshot %v, want seq 3", s.Snapshot)
	}
}
