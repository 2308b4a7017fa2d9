package journal

// Benchmarks of the journal's size under churn and of its checksums' cost.
//
//   - BenchmarkChurnSize: 200 live pods and 10,000 churn steps (a third each
//     add a pod, remove one, or edit one), records of ~256 bytes with a
//     1 KiB PodAccepted per pod start, a snapshot every 20 events of a pod, a
//     removed pod kept (final snapshot) for a retention window of 200 steps
//     and then deleted with DeleteAt, as the node's compaction does. Reports
//     journal.db's size at the end and its peak (db-KiB, peak-db-KiB) and the
//     bytes of the values stored at the end (live-KiB).
//   - BenchmarkChecksum: the CPU cost of framing one ~256-byte record
//     (both CRC-32Cs) against marshalling it, and against the durable append
//     path per record (1,000 writers, fsync on): crc-%-of-append is the share
//     of the append path the checksums take.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

const (
	churnLive      = 200
	churnSteps     = 10000
	churnRetention = 200 // steps
	churnSnapEvery = 20  // events
)

func BenchmarkChurnSize(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		size, peak, live := runChurn(b, dir)
		b.ReportMetric(float64(size)/1024, "db-KiB")
		b.ReportMetric(float64(peak)/1024, "peak-db-KiB")
		b.ReportMetric(float64(live)/1024, "live-KiB")
	}
}

// runChurn runs the churn of BenchmarkChurnSize in dir and returns the
// file's final and peak sizes and the bytes of the values stored at the end.
func runChurn(tb testing.TB, dir string) (size, peak, live int64) {
	ctx := context.Background()
	j, err := Open(ctx, dir, Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	type pod struct {
		uid      string
		last     uint64
		sinceSnp int
	}
	var (
		live_   []*pod
		removed []struct {
			uid  string
			seq  uint64
			step int
		}
		next int
	)
	fileSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, FileName))
		if err != nil {
			tb.Fatal(err)
		}
		return fi.Size()
	}
	appendN := func(p *pod, n int, first bool) {
		evs := make([]*pb.Envelope, n)
		for i := range evs {
			size := benchRecordSize
			if first && i == 0 {
				size = 1024 // the pod as accepted
			}
			evs[i] = paddedEnvelope(p.uid, p.last+uint64(i)+1, size)
		}
		if err := j.Append(ctx, p.uid, evs...); err != nil {
			tb.Fatal(err)
		}
		p.last += uint64(n)
		if p.sinceSnp += n; p.sinceSnp >= churnSnapEvery {
			if err := j.SaveSnapshot(ctx, snapshotAt(p.uid, p.last)); err != nil {
				tb.Fatal(err)
			}
			p.sinceSnp = 0
		}
	}
	add := func() {
		p := &pod{uid: fmt.Sprintf("%08x-0000-4000-8000-%012x", next, next)}
		next++
		appendN(p, 6, true)
		live_ = append(live_, p)
	}
	for range churnLive {
		add()
	}
	for step := 0; step < churnSteps; step++ {
		switch op := rng.IntN(3); {
		case op == 0 || len(live_) < churnLive/2:
			add()
		case op == 1 && len(live_) > churnLive/2:
			i := rng.IntN(len(live_))
			p := live_[i]
			live_[i] = live_[len(live_)-1]
			live_ = live_[:len(live_)-1]
			appendN(p, 3, false) // killing, stopped, removed
			if err := j.SaveSnapshot(ctx, snapshotAt(p.uid, p.last)); err != nil {
				tb.Fatal(err)
			}
			removed = append(removed, struct {
				uid  string
				seq  uint64
				step int
			}{p.uid, p.last, step})
		default:
			appendN(live_[rng.IntN(len(live_))], 4, false)
		}
		for len(removed) > 0 && step-removed[0].step > churnRetention {
			if err := j.DeleteAt(ctx, removed[0].uid, removed[0].seq); err != nil {
				tb.Fatal(err)
			}
			removed = removed[1:]
		}
		// Keep the live set near churnLive.
		for len(live_) < churnLive-20 {
			add()
		}
		if step%100 == 0 {
			peak = max(peak, fileSize())
		}
	}
	if err := j.Close(); err != nil {
		tb.Fatal(err)
	}
	size = fileSize()
	peak = max(peak, size)
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketLog, bucketSnapshots} {
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error { live += int64(len(k) + len(v)); return nil })
		}
		return nil
	})
	return size, peak, live
}

// benchFramed is a framed record the checksum is computed over.
var benchFramed = func() []byte {
	v, _ := marshalOpts.MarshalAppend(newFrame(0), paddedEnvelope("bench-00001", 7, benchRecordSize))
	return v
}()

func BenchmarkChecksum(b *testing.B) {
	e := paddedEnvelope("bench-00001", 7, benchRecordSize)
	key := logKey(12345)
	uid := []byte(e.PodUid)
	// Timed over a fixed number of records, so that -benchtime=1x (make
	// bench) measures them too.
	const n = 200000
	perRecord := func(fn func() error) float64 {
		start := time.Now()
		for range n {
			if err := fn(); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / n
	}
	var marshalNs, frameNs float64
	for range 3 { // best of 3, alternating
		m := perRecord(func() error { _, err := marshalOpts.MarshalAppend(newFrame(0), e); return err })
		f := perRecord(func() error {
			v, err := marshalOpts.MarshalAppend(newFrame(0), e)
			sealPartial(v, uid, e.Seq)
			sealKey(v, key)
			return err
		})
		if marshalNs == 0 || m < marshalNs {
			marshalNs = m
		}
		if frameNs == 0 || f < frameNs {
			frameNs = f
		}
	}
	crcOnly := perRecord(func() error {
		v := benchFramed
		sealPartial(v, uid, e.Seq)
		sealKey(v, key)
		return nil
	})
	b.Run("append-path", func(b *testing.B) {
		j, err := Open(context.Background(), b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		ctx := context.Background()
		runWriters(b, 1000, func(_ int, uid string, seq uint64) error {
			return j.Append(ctx, uid, paddedEnvelope(uid, seq, benchRecordSize))
		})
		st := j.Stats()
		perRecord := float64(b.Elapsed().Nanoseconds()) / float64(st.Records)
		b.ReportMetric(marshalNs, "marshal-ns/record")
		b.ReportMetric(frameNs, "marshal+crc-ns/record")
		b.ReportMetric(crcOnly, "crc-ns/record")
		b.ReportMetric(perRecord, "append-ns/record")
		b.ReportMetric(100*crcOnly/perRecord, "crc-%-of-append")
	})
}

// The churn stays bounded: the file at the end is within a small multiple
// of the data it holds, well below what the churn wrote in total.
func TestChurnSizeIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 churn steps")
	}
	size, peak, live := runChurn(t, t.TempDir())
	t.Logf("journal.db %d KiB (peak %d KiB), values stored %d KiB", size/1024, peak/1024, live/1024)
	if size > 8*live+1<<20 {
		t.Fatalf("journal.db is %d bytes for %d bytes of values", size, live)
	}
}
