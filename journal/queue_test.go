package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

// take reads the first 64 bytes of every request, the writer's staging the
// next 64 of an append: in a pooled request of 192 bytes (a size class whose
// objects start at multiples of 64 bytes) they are two cache lines.
func TestRequestLayout(t *testing.T) {
	var r request
	if got := unsafe.Sizeof(r); got <= 176 || got > 192 {
		t.Errorf("request is %d bytes, want 177-192 (the size class of 192 bytes)", got)
	}
	if end := unsafe.Offsetof(r.records) + unsafe.Sizeof(r.records); end > 64 {
		t.Errorf("take's fields end at byte %d, want at most 64", end)
	}
	if at := unsafe.Offsetof(r.encodeBuffers); at != 64 {
		t.Errorf("the records start at byte %d, want 64", at)
	}
	if end := unsafe.Offsetof(r.one) + unsafe.Sizeof(r.one); end > 128 {
		t.Errorf("an append's record slices end at byte %d, want at most 128", end)
	}
}

// Requests queued together but committed in several batches (MaxBatch):
// every caller gets its own request's outcome, refused or committed.
func TestOutcomesAcrossBatches(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	opts.MaxBatch = 3
	j := openT(t, t.TempDir(), opts)
	release := holdWriter(t, j, gate)

	const pods = 20
	errs := make([]error, pods)
	var wg sync.WaitGroup
	for i := range pods {
		uid := fmt.Sprintf("p%d", i)
		seq := uint64(1)
		if i%3 == 1 {
			seq = 2 // does not follow: refused
		}
		wg.Go(func() { errs[i] = j.Append(context.Background(), uid, ev(uid, seq)) })
	}
	eventually(t, "all requests queued", func() bool { return j.queue.length() == pods })
	release()
	wg.Wait()
	refused := 0
	for i, err := range errs {
		uid := fmt.Sprintf("p%d", i)
		if i%3 == 1 {
			refused++
			wantErrIs(t, err, ErrSequence)
			if _, err := j.Load(context.Background(), uid); !errors.Is(err, ErrNotFound) {
				t.Errorf("Load(%s) after a refused append = %v, want ErrNotFound", uid, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("append to %s: %v", uid, err)
		}
		wantSeqs(t, loadT(t, j, uid), uid, 1, 1)
	}
	// The gate-keeper's commit, then batches of at most 3 requests; a batch
	// whose requests were all refused commits nothing (the queue's order
	// decides how many there are).
	accepted := pods - refused
	st := j.Stats()
	if st.LargestBatch > 3 || st.Rejected != uint64(refused) || st.Requests != uint64(1+accepted) ||
		st.Commits < uint64(1+(accepted+2)/3) || st.Commits > uint64(1+(pods+2)/3) {
		t.Fatalf("stats %+v: want batches of at most 3, %d refused, %d requests and %d-%d commits",
			st, refused, 1+accepted, 1+(accepted+2)/3, 1+(pods+2)/3)
	}
}
