package journal

// Benchmarks of the journal's durable append path against two bare bbolt
// references with the same record sizes (~256-byte envelopes), the same
// file layout (records appended to the log bucket under increasing record
// numbers, FillPercent 1) and the same number of concurrent writers, each
// writer appending one record at a time and waiting until it is durable:
//
//   - BenchmarkAppend/pods=N: the journal (group commit, fsync on).
//   - BenchmarkRefBatch/pods=N: each writer calls bbolt's DB.Batch with its
//     default MaxBatchDelay (10ms) and MaxBatchSize (1000).
//   - BenchmarkRefGroupCommit/pods=N: a minimal single writer goroutine fed by
//     a channel that commits everything pending in one db.Update; no journal
//     code (no index, no sequence check).
//
// Each reports records/s. Target: the journal reaches at least 90% of
// BenchmarkRefGroupCommit's records/s at each N. Measured when the design
// was made (ext4, 2 cores): DB.Batch ≈ 8.5k records/s from 100 writers;
// group commit ≈ 96k/s from 100 writers and ≈ 300k/s from 1,000.
//
// Measured with the log layout (schema version 2; same machine, medians of 5
// back-to-back pairs of -benchtime=300000x runs): journal/reference ≈ 0.98
// from 100 writers (≈92k records/s), ≈ 0.95 from 1,000 (≈323k/s) and ≈ 0.88
// from 10,000 (≈298k/s, where the index upkeep and the per-request
// bookkeeping of 10,000 waiting callers cost most). With schema version 1's
// bucket per pod, a commit rewrote a page per pod in it and the journal
// reached only 30-45k records/s at any N. Shared-disk noise between runs is
// ±50%; compare runs made back to back.
//
// Measured again for issue 15 on 2026-12-07 (same 2-core VM, shared with
// other engineers' builds, tests and benchmarks). While the load average
// was 4-18, single runs of one case varied by up to 3x, so these figures
// come from a quiet window (load average 0.5-1.9): medians of 8
// interleaved rounds, each round running the reference, the journal before
// (7c80d1b) and after (branch journal90), and the reverted variant below,
// in processes of their own, in rotating order; -benchtime=200000x for pods=10000, 100000x for the
// others; /tmp on ext4. Ratio = the journal's median / the reference's:
//
//	             before            after             reference
//	pods=100     117k/s  0.91      133k/s  1.03      129k/s
//	pods=1000    214k/s  0.92      240k/s  1.03      233k/s
//	pods=10000   176k/s  0.84      179k/s  0.85      210k/s
//
// (Medians of the per-round ratios: 0.93, 0.86, 0.82 before; 1.04, 0.94,
// 0.85 after.) pods=10000 still misses the 90% target. There both sides
// are CPU-bound and the journal spends ~15% more CPU per record (user+sys
// of the whole process, setup included: 19.1 against 16.6 µs per record):
// in a CPU profile (600,000 records) its writer goroutine took 2.06 s
// against the reference writer's 1.33 s (the transaction 1.31 against
// 0.96 s: sequence checks, index staging, sealing each record's key into
// its CRC; the index lookups, publishing and answering outside it), and
// its callers' framing, CRCs and marshalling 1.27 s against a bare
// marshal's 0.63 s (of which sizing the message took 0.40 s against 0.09 s,
// for the same message and library calls: not understood). What was cut:
// the allocations per append (1,433 -> 1,072 B and 15 -> 11 allocations
// per record at pods=10000 on tmpfs; the records are encoded into buffers
// the pooled request keeps); the index entries are also read in the lookup
// loop before the transaction, a gain within the noise. Answering from a
// goroutine of its own took ~a fifth of the writer's time off it but cost
// CPU and measured no better, so it was reverted (see the history of
// writer.go).
//
// Measured again on 2026-12-07 03:16-04:01 UTC for branch journal10k,
// against 6c10c99 (before) and the reference, same method (8 interleaved
// rounds, then 6), but with no quiet window: others' builds, fleet and e2e
// runs kept the load average at 5-28, and pods=100 ran at 9-18k records/s
// (129k in the quiet window above), so the disk, not this code, set the
// pace. Medians of the per-round ratios to the reference:
//
//	                 load     pods=100   pods=1000   pods=10000
//	03:16 before     7.1-9.1  0.91       0.92        0.77  (7 rounds*)
//	      after               0.94       0.97        0.90
//	03:42 before     10-28    1.12       1.08        0.84  (8 rounds)
//	      after               0.96       1.06        0.82
//	03:55 before     6.0-9.4  1.01       0.73        0.94  (6 rounds)
//	      after               1.05       0.53        0.92
//
// (*An eighth round was left out: it overlapped a profiling run.) Single
// runs of one case varied by up to 5x within a set: these do not tell the
// before from the after. In the two fastest rounds (03:52, load 13 and 10
// at their start, the reference at 242-246k/s for pods=10000) the ratios
// at pods=10000 were 0.78 and 0.86 after, 0.83 and 0.85 before. So 90% at
// 10,000 writers is still not shown to be met.
//
// What changed (CPU profiles of pods=10000, 600,000 records, load 7-9, one
// run each, back to back, at 02:39 with (1) and (2) only): the writer
// goroutine took 2.43 s before, 1.67 s after, the reference writer 1.59 s;
// the whole process 5.93 s before, 4.89 s after, the reference 5.03 s.
// (1) The writer answered each caller with a send on its own channel
// (0.58 s); now one closed channel per batch wakes them all (0.19 s): each request gets the completion of
// the batch it is taken into, and its caller waits on the queue's next
// completion read before its push (completion.go, since replaced by
// wake.go, said why it is never a later batch's). (2) An append-only batch is staged (index lookup,
// sequence check, numbering, sealing each record's key) in one loop before
// its transaction, so the cache misses of different requests overlap; the
// transaction only puts the staged records, as the reference does. (3) A
// request is 192 bytes with take's fields in its first cache line and an
// append's record slices in its second; outcomes are written only to
// refused requests or after a failed commit. Sealing the keys in the
// callers (numbers reserved at enqueue) was not tried: after (2), sealKey
// is 0.04 s of the writer's 1.67 s.
//
// Looked at again on 2026-12-07 05:36-06:49 UTC (branch j90), with the load
// average at 3.7-15 (another engineer's 10,000-pod fleet run and builds):
// fsync alone took 5-100 ms at times, and single runs of one case varied by
// up to 5x. Per-round ratios to the reference at pods=10000 (interleaved,
// -benchtime=200000x, one process per run) for the code then (one closed
// channel per batch): medians 0.96 (7 rounds, load 3.7-8) and 0.97 (11
// rounds, load 4-9.6), within a range of 0.65-2.5; so neither a pass nor
// the 04:13 miss was shown by them. What was found:
//
//   - CPU is not the gap. User+system time of a whole run (two times 200,000
//     records) had medians of 3.1 s for the journal and 3.2 s for the
//     reference (8 rounds); in a CPU profile (800,000 records) the writer
//     goroutine took 2.02 s against the reference writer's 1.52 s but the
//     whole process 5.89 s against 5.15 s, and in a runtime trace of the
//     next pair the journal's process ran 7.4 s against 8.6 s.
//   - The writer waits for a processor about as long as it runs. In runtime
//     traces of pods=10000 it was runnable (ready, not running) for 1.0-1.9 s
//     and running for 0.9-1.9 s per 200,000 records, dozens of its waits
//     20-290 ms long, after being preempted (10 ms of running, or a garbage
//     collection) or coming back from its fsync; the reference writer's
//     waits were mostly under 45 ms. The closed channel makes all of a
//     batch's callers runnable at once, most of them in the scheduler's
//     global run queue, which is first in, first out; a writer that lands
//     behind them waits until nearly all of them have run and queued again,
//     and takes them all: batch sizes alternate between a few and nearly all
//     writers (1, 1, 9987, 9902, 9904, 1278, 8654, ...; 13-41 of 38-75
//     commits under 1,000 records, against 5-16 of 39-51 for the reference,
//     whose writer wakes its callers one send at a time and takes the next
//     batch when it is done).
//
// Tried: (a) waking callers chunk by chunk (a request's own channel; the
// writer wakes the first chunk's head, a head its 63 members, the last of
// a chunk to wake the next head): the writer's runnable time fell to
// 0.18-0.84 s, its waits mostly under 1 ms, and its per-round ratio at
// pods=10000 was 1.21 (7 rounds, against 0.96 for the closed channel in
// the same rounds); but with fsync nearly free (tmpfs, as NoSync, which
// sim and fleet use) the writer then committed each chunk as it arrived
// (19-56 records per commit) and reached 27-64k records/s against
// 122-170k, with twice the CPU. Not kept alone. (b) (a), with the writer
// waiting until half of a batch's callers have woken before it takes the
// next: kept (wake.go). On tmpfs 210-227k against 196-204k records/s at
// pods=10000, 264-275k against 154-225k at 1000. On the disk, at
// pods=10000, 0.97 like the closed channel over 11 rounds at load 4-9.6;
// in the quietest window of the day (06:54-06:56, load 3.8-7.8) per-round
// ratios 1.04 1.08 1.02 0.97 0.96 0.87 1.04 (median 1.02) against 0.84
// 0.96 0.90 0.77 0.91 0.86 1.01 (median 0.90) for the closed channel, with
// 4-14% less CPU; at pods=1000 medians 0.92 against 0.96 (7 rounds), at
// pods=100 0.95 against 0.95 (3 rounds). Runs at load 9-10 right after
// (07:00-07:04, disk-bound: 10-60k records/s) told nothing. (c) That wait
// alone, with the closed channel: per-round medians 0.80 and 0.97 against
// 0.90 and 1.1 for the closed channel without it (6 rounds each). Not kept.
// (d) bolt.Options.InitialMmapSize of 256 MiB (no remaps, so none of
// bbolt's copies of the transaction's records out of the old mapping):
// 903-1,017 instead of 1,168-1,345 bytes allocated per append at
// pods=10000 and 19-21 instead of 24-26 garbage collections per run, but
// bbolt sizes file growth from the mapping, so the file then grows by
// 16 MiB from its first growth (apparent size; a size-bound and a
// truncation test depend on it). Not kept.
//
// One run appends max(b.N, benchMinRecords) records spread evenly over the
// N writers, but at least benchMinPerWriter per writer, so -benchtime=1x
// still measures many commits and the 10,000-writer case stays short
// (200,000 records). BenchmarkLoadAll10k measures the recovery read of
// 10,000 pods × 10 events, BenchmarkOpen100k the Open (check and index
// build) of 100,000 records.

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// benchRecordSize is the marshalled size of a benchmark envelope.
const benchRecordSize = 256

var benchWriters = []int{100, 1000, 10000}

// paddedEnvelope is event seq of pod uid: a PodAccepted whose pod_json is
// padded so that the marshalled envelope is about size bytes (with seqs
// below 128; larger seqs add a byte). size 0 gives ev's small event.
func paddedEnvelope(uid string, seq uint64, size int) *pb.Envelope {
	if size == 0 {
		return ev(uid, seq)
	}
	e := &pb.Envelope{
		SchemaVersion: SchemaVersion,
		Seq:           seq,
		TimeUnixNano:  testTime.UnixNano(),
		PodUid:        uid,
		Event:         &pb.Event{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{}}},
	}
	e.Event.GetPodAccepted().PodJson = padding(uid, size)
	return e
}

var paddingCache sync.Map // "len(uid)/size" → []byte

// padding returns a pod_json that makes an envelope of a uid of this length
// size bytes long.
func padding(uid string, size int) []byte {
	key := fmt.Sprintf("%d/%d", len(uid), size)
	if p, ok := paddingCache.Load(key); ok {
		return p.([]byte)
	}
	e := &pb.Envelope{
		SchemaVersion: SchemaVersion, Seq: 1, TimeUnixNano: testTime.UnixNano(), PodUid: uid,
		Event: &pb.Event{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{}}},
	}
	pad := max(0, size-proto.Size(e))
	for ; pad > 0; pad-- {
		e.Event.GetPodAccepted().PodJson = make([]byte, pad)
		if proto.Size(e) <= size {
			break
		}
	}
	p := make([]byte, pad)
	for i := range p {
		p[i] = 'x'
	}
	paddingCache.Store(key, p)
	return p
}

func TestPaddedEnvelopeSize(t *testing.T) {
	for _, uid := range []string{"bench-0", "bench-09999", "6a1f6c57-77a8-4b8a-9c61-1c1f0a2b3c4d"} {
		if got := proto.Size(paddedEnvelope(uid, 1, benchRecordSize)); got != benchRecordSize {
			t.Errorf("envelope of %s is %d bytes, want %d", uid, got, benchRecordSize)
		}
	}
}

// One run of an append benchmark writes at least benchMinRecords records,
// and each writer at least benchMinPerWriter, so that the start (goroutines
// starting, the first small commits, the file growing) does not dominate.
const (
	benchMinRecords   = 50000
	benchMinPerWriter = 20
)

// runWriters runs writers goroutines, each calling appendOne for seqs
// 1..perWriter, and reports records/s. Only the appends are timed.
func runWriters(b *testing.B, writers int, appendOne func(w int, uid string, seq uint64) error) {
	perWriter := max(max(b.N, benchMinRecords)/writers, benchMinPerWriter)
	uids := make([]string, writers)
	for w := range uids {
		uids[w] = fmt.Sprintf("bench-%05d", w)
	}
	start := make(chan struct{})
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			<-start
			for seq := uint64(1); seq <= uint64(perWriter); seq++ {
				if err := appendOne(w, uids[w], seq); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(writers*perWriter)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkAppend(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("pods=%d", writers), func(b *testing.B) {
			j, err := Open(context.Background(), b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			ctx := context.Background()
			runWriters(b, writers, func(_ int, uid string, seq uint64) error {
				return j.Append(ctx, uid, paddedEnvelope(uid, seq, benchRecordSize))
			})
			st := j.Stats()
			b.ReportMetric(float64(st.Records)/float64(st.Commits), "records/commit")
		})
	}
}

// openRefDB opens a bare bbolt file with the journal's options and layout.
func openRefDB(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "ref.db"), 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketLog)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// refLog stores records in the journal's layout: at the end of the log
// under the next record number. Its methods run inside write transactions,
// which bbolt serializes.
type refLog struct{ last uint64 }

func (l *refLog) put(tx *bolt.Tx, rec []byte) error {
	log := logBucket(tx)
	l.last++
	return log.Put(logKey(l.last), rec)
}

func BenchmarkRefBatch(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("pods=%d", writers), func(b *testing.B) {
			db := openRefDB(b)
			var l refLog
			runWriters(b, writers, func(_ int, uid string, seq uint64) error {
				rec, err := proto.Marshal(paddedEnvelope(uid, seq, benchRecordSize))
				if err != nil {
					return err
				}
				return db.Batch(func(tx *bolt.Tx) error { return l.put(tx, rec) })
			})
		})
	}
}

// refRequest is one record for the reference group-commit writer.
type refRequest struct {
	rec  []byte
	done chan error
}

// BenchmarkRefGroupCommit runs the reference group commit: one writer
// goroutine takes everything pending from a channel and appends it to the
// log in one db.Update.
func BenchmarkRefGroupCommit(b *testing.B) {
	for _, writers := range benchWriters {
		b.Run(fmt.Sprintf("pods=%d", writers), func(b *testing.B) {
			db := openRefDB(b)
			reqs := make(chan refRequest, writers)
			writerDone := make(chan struct{})
			var commits, records int
			go func() {
				defer close(writerDone)
				var (
					batch []refRequest
					l     refLog
				)
				for r := range reqs {
					batch = append(batch[:0], r)
				drain:
					for len(batch) < DefaultMaxBatch {
						select {
						case r, ok := <-reqs:
							if !ok {
								break drain
							}
							batch = append(batch, r)
						default:
							break drain
						}
					}
					err := db.Update(func(tx *bolt.Tx) error {
						for _, r := range batch {
							if err := l.put(tx, r.rec); err != nil {
								return err
							}
						}
						return nil
					})
					commits++
					records += len(batch)
					for _, r := range batch {
						r.done <- err
					}
				}
			}()
			runWriters(b, writers, func(_ int, uid string, seq uint64) error {
				rec, err := proto.Marshal(paddedEnvelope(uid, seq, benchRecordSize))
				if err != nil {
					return err
				}
				done := make(chan error, 1)
				reqs <- refRequest{rec: rec, done: done}
				return <-done
			})
			close(reqs)
			<-writerDone
			b.ReportMetric(float64(records)/float64(commits), "records/commit")
		})
	}
}

func BenchmarkLoadAll10k(b *testing.B) {
	const pods, events = 10000, 10
	dir := b.TempDir()
	fillJournal(b, dir, pods, events, benchRecordSize)
	j, err := Open(context.Background(), dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		all, err := j.LoadAll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(all) != pods {
			b.Fatalf("%d pods, want %d", len(all), pods)
		}
	}
	b.ReportMetric(float64(pods*events*b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkOpen100k(b *testing.B) {
	const pods, events = 10000, 10
	dir := b.TempDir()
	fillJournal(b, dir, pods, events, benchRecordSize)
	opts := Options{NoSync: true}
	b.ResetTimer()
	for b.Loop() {
		j, err := Open(context.Background(), dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pods*events*b.N)/b.Elapsed().Seconds(), "records/s")
}
