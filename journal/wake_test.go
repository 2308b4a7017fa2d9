package journal

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// isWoken reports whether r's caller has been woken (without consuming it).
func isWoken(r *request) bool { return len(r.wake) == 1 }

// The writer wakes only the first chunk's head; the head wakes its chunk;
// the last of a chunk to wake wakes the next head; half is closed when half
// of the batch has woken, not before.
func TestWakeBatchChunkByChunk(t *testing.T) {
	const n = 3*wakeChunkSize + 10
	batch := make([]*request, n)
	for i := range batch {
		batch[i] = &request{wake: make(chan struct{}, 1)}
	}
	half := wakeBatch(batch)
	if half == nil {
		t.Fatalf("a batch of %d gets no half channel", n)
	}
	wokenNow := func() (w []int) {
		for i, r := range batch {
			if isWoken(r) {
				w = append(w, i)
			}
		}
		return w
	}
	if w := wokenNow(); len(w) != 1 || w[0] != 0 {
		t.Fatalf("the writer woke %v, want only the first request", w)
	}
	// take wakes request i's caller as it would: it receives, then does
	// its part.
	done := make([]bool, n)
	take := func(i int) {
		t.Helper()
		if !isWoken(batch[i]) {
			t.Fatalf("request %d is taken before it was woken", i)
		}
		<-batch[i].wake
		batch[i].woken()
		done[i] = true
	}
	halfClosed := func() bool {
		select {
		case <-half:
			return true
		default:
			return false
		}
	}
	taken := 0
	for k := 0; k*wakeChunkSize < n; k++ {
		from, to := k*wakeChunkSize, min((k+1)*wakeChunkSize, n)
		take(from) // the head
		for i := from + 1; i < n; i++ {
			if want := i < to; isWoken(batch[i]) != want {
				t.Fatalf("chunk %d's head woken: request %d woken %v, want %v", k, i, !want, want)
			}
		}
		taken++
		// Its members, in reverse order: the next head is woken by the
		// last to wake, whichever it is.
		for i := to - 1; i > from; i-- {
			if to < n && isWoken(batch[to]) {
				t.Fatalf("chunk %d: the next head is woken before all of the chunk woke", k)
			}
			take(i)
			taken++
			if got, want := halfClosed(), taken >= (n+1)/2; got != want {
				t.Fatalf("%d of %d woken: half closed %v, want %v", taken, n, got, want)
			}
		}
	}
	for i, d := range done {
		if !d {
			t.Fatalf("request %d was never woken", i)
		}
	}
	if h := wakeBatch([]*request{{wake: make(chan struct{}, 1)}}); h != nil {
		t.Errorf("a batch of one gets a half channel: the writer would wait for it")
	}
}

// Every caller of batches of several chunks gets its own outcome, on both
// wait paths (a ctx that cannot end, one that can).
func TestWakeEveryCallerOfLargeBatches(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	j := openT(t, t.TempDir(), opts)
	release := holdWriter(t, j, gate)

	const pods = 5*wakeChunkSize + 3
	errs := make([]error, pods)
	var wg sync.WaitGroup
	for i := range pods {
		uid := fmt.Sprintf("p%d", i)
		seq := uint64(1)
		if i%7 == 3 {
			seq = 2 // does not follow: refused
		}
		ctx := context.Background()
		if i%2 == 1 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
		}
		wg.Go(func() { errs[i] = j.Append(ctx, uid, ev(uid, seq)) })
	}
	eventually(t, "all requests queued", func() bool { return j.queue.length() == pods })
	release()
	wg.Wait()
	for i, err := range errs {
		if i%7 == 3 {
			wantErrIs(t, err, ErrSequence)
		} else if err != nil {
			t.Fatalf("append to p%d: %v", i, err)
		}
	}

	// A second round, queued while the writer commits, not held.
	for i := range pods {
		uid := fmt.Sprintf("p%d", i)
		if i%7 == 3 {
			wg.Go(func() { errs[i] = j.Append(context.Background(), uid, ev(uid, 1)) })
			continue
		}
		wg.Go(func() { errs[i] = j.Append(context.Background(), uid, ev(uid, 2)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("second append to p%d: %v", i, err)
		}
	}
}
