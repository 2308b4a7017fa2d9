package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	berrors "go.etcd.io/bbolt/errors"
)

func TestAppendCanceledWhileQueuedIsNotWritten(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	j := openT(t, t.TempDir(), opts)
	release := holdWriter(t, j, gate)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Append(ctx, "p", ev("p", 1)) }()
	eventually(t, "append queued", func() bool { return j.queue.length() == 1 })
	cancel()
	// Append returns while the writer is still held.
	err := <-done
	wantErrIs(t, err, context.Canceled)
	mustContain(t, err, `"p"`)
	release()

	if _, err := j.Load(context.Background(), "p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after a canceled append = %v, want ErrNotFound", err)
	}
	// The stream can start at 1: nothing was written.
	appendT(t, j, "p", ev("p", 1))
}

func TestAppendWithEndedContext(t *testing.T) {
	j := openT(t, t.TempDir(), testOptions(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErrIs(t, j.Append(ctx, "p", ev("p", 1)), context.Canceled)
	wantErrIs(t, j.SaveSnapshot(ctx, snapshotAt("p", 1)), context.Canceled)
	wantErrIs(t, j.Delete(ctx, "p"), context.Canceled)
	_, err := j.Load(ctx, "p")
	wantErrIs(t, err, context.Canceled)
	_, err = j.LoadAll(ctx)
	wantErrIs(t, err, context.Canceled)
	_, err = j.Pods(ctx)
	wantErrIs(t, err, context.Canceled)
	wantErrIs(t, j.Verify(ctx), context.Canceled)
	if st := j.Stats(); st.Commits != 0 {
		t.Fatalf("stats %+v: something was committed", st)
	}
}

func TestCloseCommitsQueuedRequests(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	dir := t.TempDir()
	j := openT(t, dir, opts)
	release := holdWriter(t, j, gate)

	const pods = 20
	var wg sync.WaitGroup
	for i := range pods {
		uid := fmt.Sprintf("p%d", i)
		wg.Go(func() {
			if err := j.Append(context.Background(), uid, ev(uid, 1)); err != nil {
				t.Errorf("queued append: %v", err)
			}
		})
	}
	eventually(t, "appends queued", func() bool { return j.queue.length() == pods })
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	eventually(t, "close started", j.closed.Load)
	wantErrIs(t, j.Append(context.Background(), "late", ev("late", 1)), ErrClosed)
	release()
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}

	j = openT(t, dir, testOptions(t))
	all, err := j.LoadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != pods+1 { // and the gate-keeper
		t.Fatalf("%d pods after Close and reopen, want %d", len(all), pods+1)
	}
}

func TestCallsAfterClose(t *testing.T) {
	j, err := Open(context.Background(), t.TempDir(), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	appendT(t, j, "p", ev("p", 1))
	closeT(t, j)
	ctx := context.Background()
	wantErrIs(t, j.Append(ctx, "p", ev("p", 2)), ErrClosed)
	wantErrIs(t, j.SaveSnapshot(ctx, snapshotAt("p", 1)), ErrClosed)
	wantErrIs(t, j.Delete(ctx, "p"), ErrClosed)
	wantErrIs(t, j.Verify(ctx), ErrClosed)
	_, err = j.Load(ctx, "p")
	wantErrIs(t, err, ErrClosed)
	_, err = j.LoadAll(ctx)
	wantErrIs(t, err, ErrClosed)
	_, err = j.Pods(ctx)
	wantErrIs(t, err, ErrClosed)
	if err := j.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
}

// A commit that fails (here: the file may not grow) fails every request of
// its batch, and the journal goes on working.
func TestFailedCommitFailsWholeBatch(t *testing.T) {
	gate := newWriterGate()
	opts := testOptions(t)
	opts.beforeCommit = gate.hook
	opts.maxSize = 1 << 20
	j := openT(t, t.TempDir(), opts)
	ctx := context.Background()
	release := holdWriter(t, j, gate)

	huge := ev("huge", 1)
	huge.Event.GetContainerStarted().ContainerId = string(make([]byte, 2<<20))
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = j.Append(ctx, "a", ev("a", 1)) })
	eventually(t, "a queued", func() bool { return j.queue.length() == 1 })
	wg.Go(func() { errs[1] = j.Append(ctx, "huge", huge) })
	eventually(t, "huge queued", func() bool { return j.queue.length() == 2 })
	wg.Go(func() { errs[2] = j.Append(ctx, "b", ev("b", 2)) }) // rejected on its own
	eventually(t, "b queued", func() bool { return j.queue.length() == 3 })
	release()
	wg.Wait()

	wantErrIs(t, errs[0], berrors.ErrMaxSizeReached)
	wantErrIs(t, errs[1], berrors.ErrMaxSizeReached)
	wantErrIs(t, errs[2], ErrSequence)
	mustContain(t, errs[1], j.Path())
	if st := j.Stats(); st.FailedCommits != 1 {
		t.Fatalf("stats %+v, want 1 failed commit", st)
	}
	for _, uid := range []string{"a", "huge"} {
		if _, err := j.Load(ctx, uid); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Load(%s) after a failed commit = %v, want ErrNotFound", uid, err)
		}
	}
	appendT(t, j, "a", ev("a", 1))
	wantSeqs(t, loadT(t, j, "a"), "a", 1, 1)
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFileModes(t *testing.T) {
	dir := t.TempDir() + "/state/journal"
	openT(t, dir, testOptions(t))
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, dir + "/" + FileName: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

func TestOpenTightensFileMode(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	closeT(t, j)
	path := dir + "/" + FileName
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	openT(t, dir, testOptions(t))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v after Open, want 0600", fi.Mode())
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := OpenReadOnly(ctx, dir, testOptions(t)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("OpenReadOnly of a missing journal = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dir + "/" + FileName); !os.IsNotExist(err) {
		t.Fatalf("OpenReadOnly created the file: %v", err)
	}
	j := openT(t, dir, testOptions(t))
	appendT(t, j, "p", evs("p", 1, 3)...)
	closeT(t, j)

	// Readers share the file.
	r1, err := OpenReadOnly(ctx, dir, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := OpenReadOnly(ctx, dir, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	wantSeqs(t, loadT(t, r2, "p"), "p", 1, 3)
	if err := r1.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, r1.Append(ctx, "p", ev("p", 4)), ErrReadOnly)
	wantErrIs(t, r1.SaveSnapshot(ctx, snapshotAt("p", 3)), ErrReadOnly)
	wantErrIs(t, r1.Delete(ctx, "p"), ErrReadOnly)
	// A writer cannot open while readers hold the file.
	_, err = Open(ctx, dir, testOptions(t))
	wantErrIs(t, err, ErrLocked)
}
