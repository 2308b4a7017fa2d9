package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestAppendLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	appendT(t, j, "pod-a", evs("pod-a", 1, 3)...)
	withTime := ev("pod-a", 4)
	withTime.TimeUnixNano = 42
	appendT(t, j, "pod-a", withTime)

	check := func(j *Journal) {
		t.Helper()
		s := loadT(t, j, "pod-a")
		if s.Snapshot != nil {
			t.Fatalf("snapshot %v, want none", s.Snapshot)
		}
		wantSeqs(t, s, "pod-a", 1, 4)
		if s.LastSeq() != 4 {
			t.Fatalf("LastSeq %d, want 4", s.LastSeq())
		}
		if got := s.Events[0].TimeUnixNano; got != testTime.UnixNano() {
			t.Errorf("unset time became %d, want the clock's %d", got, testTime.UnixNano())
		}
		if got := s.Events[3].TimeUnixNano; got != 42 {
			t.Errorf("set time became %d, want 42", got)
		}
	}
	check(j)
	closeT(t, j)
	check(openT(t, dir, testOptions(t)))
}

func TestStreamsAreIsolated(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx := context.Background()
	uids := []string{"c", "a", "b"}
	for seq := uint64(1); seq <= 5; seq++ {
		for _, uid := range uids {
			appendT(t, j, uid, ev(uid, seq))
		}
	}
	for _, uid := range uids {
		wantSeqs(t, loadT(t, j, uid), uid, 1, 5)
	}
	pods, err := j.Pods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(pods, want) {
		t.Fatalf("Pods = %v, want %v", pods, want)
	}
	all, err := j.LoadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("LoadAll has %d pods, want 3", len(all))
	}
	for _, uid := range uids {
		wantSeqs(t, all[uid], uid, 1, 5)
	}
	if _, err := j.Load(ctx, "unknown"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load(unknown) = %v, want ErrNotFound", err)
	}
	mustContain(t, func() error { _, err := j.Load(ctx, "unknown"); return err }(), `"unknown"`)
}

func TestAppendRejectsInvalidEnvelopes(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	wrongSchema := ev("p", 1)
	wrongSchema.SchemaVersion = SchemaVersion + 1
	noKind := ev("p", 1)
	noKind.Event = &pb.Event{}
	for _, tc := range []struct {
		name   string
		uid    string
		events []*pb.Envelope
		want   error
	}{
		{"empty pod UID", "", evs("", 1, 1), ErrInvalid},
		{"nil envelope", "p", []*pb.Envelope{ev("p", 1), nil}, ErrInvalid},
		{"pod_uid of another pod", "p", evs("q", 1, 1), ErrInvalid},
		{"pod_uid unset", "p", []*pb.Envelope{{Seq: 1, Event: ev("p", 1).Event}}, ErrInvalid},
		{"no event", "p", []*pb.Envelope{{Seq: 1, PodUid: "p"}}, ErrInvalid},
		{"event without kind", "p", []*pb.Envelope{noKind}, ErrInvalid},
		{"seq 0", "p", evs("p", 0, 1), ErrInvalid},
		{"newer schema", "p", []*pb.Envelope{wrongSchema}, ErrSchemaVersion},
		{"seqs not consecutive", "p", []*pb.Envelope{ev("p", 1), ev("p", 3)}, ErrSequence},
		{"seqs descending", "p", []*pb.Envelope{ev("p", 2), ev("p", 1)}, ErrSequence},
		{"new pod not at 1", "p", evs("p", 2, 2), ErrSequence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := j.Append(context.Background(), tc.uid, tc.events...)
			wantErrIs(t, err, tc.want)
			mustContain(t, err, fmt.Sprintf("%q", tc.uid))
			if _, err := j.Load(context.Background(), "p"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("after a rejected append, Load(p) = %v, want ErrNotFound", err)
			}
		})
	}
	if err := j.Append(context.Background(), "p"); err != nil {
		t.Fatalf("Append without events = %v, want nil", err)
	}
}

func TestAppendSequenceChecks(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx := context.Background()
	appendT(t, j, "p", evs("p", 1, 3)...)
	for _, tc := range []struct {
		name   string
		events []*pb.Envelope
	}{
		{"duplicate of the last", evs("p", 3, 1)},
		{"restart from 1", evs("p", 1, 4)},
		{"gap", evs("p", 5, 1)},
		{"overlapping call", evs("p", 2, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := j.Append(ctx, "p", tc.events...)
			wantErrIs(t, err, ErrSequence)
			mustContain(t, err, `"p"`, "stored seq 3")
		})
	}
	appendT(t, j, "p", evs("p", 4, 2)...)
	wantSeqs(t, loadT(t, j, "p"), "p", 1, 5)
	if st := j.Stats(); st.Rejected != 4 || st.Records != 5 {
		t.Fatalf("stats %+v, want 4 rejected and 5 records", st)
	}
}

// Invalid requests committed in the same transaction as valid ones fail
// alone.
func TestSequenceErrorFailsOnlyItsRequest(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	j := openT(t, t.TempDir(), opts)
	ctx := context.Background()
	release := holdWriter(t, j, gate)

	const pods = 100
	results := make([]error, pods)
	var dup [2]error
	var wg sync.WaitGroup
	for i := range pods {
		wg.Go(func() {
			uid := fmt.Sprintf("pod-%03d", i)
			seq := uint64(1)
			if i%2 == 1 {
				seq = 2 // a gap: a new pod starts at 1
			}
			results[i] = j.Append(ctx, uid, ev(uid, seq))
		})
	}
	// Two writers for one pod: both think they append seq 1.
	for i := range dup {
		wg.Go(func() { dup[i] = j.Append(ctx, "contested", ev("contested", 1)) })
	}
	eventually(t, "all requests queued", func() bool { return j.queue.length() == pods+2 })
	release()
	wg.Wait()

	for i, err := range results {
		if i%2 == 0 && err != nil {
			t.Errorf("pod %d (valid): %v", i, err)
		}
		if i%2 == 1 {
			wantErrIs(t, err, ErrSequence)
		}
	}
	if (dup[0] == nil) == (dup[1] == nil) {
		t.Fatalf("two writers of one pod: errors %v and %v, want exactly one ErrSequence", dup[0], dup[1])
	}
	if err := errors.Join(dup[:]...); !errors.Is(err, ErrSequence) {
		t.Fatalf("contested append failed with %v, want ErrSequence", err)
	}
	st := j.Stats()
	// The gate-keeper's commit, then one for everything queued behind it.
	if st.Commits != 2 || st.LargestBatch != pods/2+1 || st.Rejected != pods/2+1 {
		t.Fatalf("stats %+v, want 2 commits, largest batch %d, %d rejected", st, pods/2+1, pods/2+1)
	}
	for i := 0; i < pods; i += 2 {
		uid := fmt.Sprintf("pod-%03d", i)
		wantSeqs(t, loadT(t, j, uid), uid, 1, 1)
	}
	if _, err := j.Load(ctx, "pod-001"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load of a pod whose only append was rejected: %v, want ErrNotFound", err)
	}
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentAppendersAreDurableAndGrouped(t *testing.T) {
	const writers, appends = 200, 50
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			uid := fmt.Sprintf("pod-%d", w)
			for seq := uint64(1); seq <= appends; seq++ {
				if err := j.Append(ctx, uid, ev(uid, seq)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := j.Stats()
	t.Logf("stats: %+v", st)
	if st.Requests != writers*appends || st.Records != writers*appends {
		t.Fatalf("stats %+v, want %d requests and records", st, writers*appends)
	}
	if st.Commits >= st.Requests/2 {
		t.Fatalf("%d commits for %d appends: group commit did not group", st.Commits, st.Requests)
	}
	if st.Fsyncs != st.Commits {
		t.Fatalf("%d fsyncs for %d commits", st.Fsyncs, st.Commits)
	}
	closeT(t, j)

	j = openT(t, dir, testOptions(t))
	all, err := j.LoadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers {
		t.Fatalf("LoadAll after reopen has %d pods, want %d", len(all), writers)
	}
	for w := range writers {
		uid := fmt.Sprintf("pod-%d", w)
		wantSeqs(t, all[uid], uid, 1, appends)
	}
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMaxBatchBoundsCommits(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	opts.MaxBatch = 10
	j := openT(t, t.TempDir(), opts)
	release := holdWriter(t, j, gate)

	const pods = 35
	var wg sync.WaitGroup
	for i := range pods {
		uid := fmt.Sprintf("p%d", i)
		wg.Go(func() {
			if err := j.Append(context.Background(), uid, ev(uid, 1)); err != nil {
				t.Error(err)
			}
		})
	}
	// One call larger than MaxBatch is committed alone.
	wg.Go(func() {
		if err := j.Append(context.Background(), "big", evs("big", 1, 25)...); err != nil {
			t.Error(err)
		}
	})
	eventually(t, "all requests queued", func() bool { return j.queue.length() == pods+1 })
	release()
	wg.Wait()
	st := j.Stats()
	if st.LargestBatch > 10 || st.Commits < 1+4+1 {
		t.Fatalf("stats %+v: want batches of at most 10 and at least 6 commits", st)
	}
	wantSeqs(t, loadT(t, j, "big"), "big", 1, 25)
}

// Pooled requests keep their encoding buffers from one Append to the next:
// every stored record must still be the one its Append encoded, whatever
// the later Appends of the same goroutines (larger, smaller, several
// records) wrote into the reused buffers.
func TestReusedBuffersKeepStoredRecords(t *testing.T) {
	const writers, rounds = 8, 30
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	ctx := context.Background()
	want := make([][]*pb.Envelope, writers)
	var wg sync.WaitGroup
	for w := range writers {
		uid := fmt.Sprintf("pod-%d", w)
		wg.Go(func() {
			seq := uint64(1)
			for i := range rounds {
				// Sizes vary by round: a small record, a large one
				// (the buffer grows), several records in one call.
				var batch []*pb.Envelope
				switch i % 3 {
				case 0:
					batch = []*pb.Envelope{ev(uid, seq)}
				case 1:
					batch = []*pb.Envelope{paddedEnvelope(uid, seq, 3000+100*w)}
				case 2:
					batch = evs(uid, seq, 3)
				}
				if err := j.Append(ctx, uid, batch...); err != nil {
					t.Error(err)
					return
				}
				seq += uint64(len(batch))
				want[w] = append(want[w], batch...)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	check := func(j *Journal) {
		t.Helper()
		for w := range writers {
			uid := fmt.Sprintf("pod-%d", w)
			s := loadT(t, j, uid)
			if len(s.Events) != len(want[w]) {
				t.Fatalf("%s: %d events stored, want %d", uid, len(s.Events), len(want[w]))
			}
			for i, e := range s.Events {
				if !proto.Equal(e, want[w][i]) {
					t.Fatalf("%s: stored event %d is %v, want %v", uid, i, e, want[w][i])
				}
			}
		}
		if err := j.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(j)
	closeT(t, j)
	check(openT(t, dir, testOptions(t)))
}

// encode appends records back to back; a record never changes when later
// ones are encoded, also when the buffer grows, and reset keeps only
// buffers of a bounded size.
func TestEncodeBuffers(t *testing.T) {
	var b encodeBuffers
	var copies [][]byte
	for i, size := range []int{300, 0, 5000, 0, 70000} {
		e := paddedEnvelope("pod-a", uint64(i+1), size)
		e.TimeUnixNano = testTime.UnixNano()
		rec, err := b.encode("pod-a", e)
		if err != nil {
			t.Fatal(err)
		}
		if cap(rec) != len(rec) {
			t.Fatalf("record %d has capacity %d beyond its %d bytes", i, cap(rec), len(rec))
		}
		copies = append(copies, slices.Clone(rec))
	}
	for i, rec := range b.recs {
		if !slices.Equal(rec, copies[i]) {
			t.Fatalf("record %d changed after later records were encoded", i)
		}
		o := openRecord(logKey(1), sealedCopy(rec, logKey(1)))
		if !o.intact || string(o.uid) != "pod-a" || o.seq != uint64(i+1) {
			t.Fatalf("record %d opens as %+v", i, o)
		}
	}
	b.reset()
	if len(b.recs) != 0 || len(b.buf) != 0 {
		t.Fatalf("reset left %d records, %d bytes", len(b.recs), len(b.buf))
	}
	if cap(b.buf) > maxKeptBuffer {
		t.Fatalf("reset kept a buffer of %d bytes (max %d)", cap(b.buf), maxKeptBuffer)
	}
}

// sealedCopy is a copy of the partly sealed record rec, sealed for key.
func sealedCopy(rec, key []byte) []byte {
	v := slices.Clone(rec)
	sealKey(v, key)
	return v
}
