package journal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A journal held open for writing is read through its socket: the copy
// opens read-only and holds every committed append, also those made after
// the server started.
func TestServeCopiesWhileOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	defer closeT(t, j)
	appendT(t, j, "p", evs("p", 1, 3)...)
	// The file itself is locked.
	if _, err := OpenReadOnly(ctx, dir, testOptions(t)); !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenReadOnly of a held journal: %v, want ErrLocked", err)
	}
	l, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, SocketName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v, want mode 0600", fi.Mode(), err)
	}
	done := make(chan error, 1)
	go func() { done <- j.Serve(ctx, l) }()
	for round, want := range []uint64{3, 5} {
		if round == 1 {
			appendT(t, j, "p", evs("p", 4, 2)...)
		}
		into := t.TempDir()
		if err := FetchCopy(ctx, dir, into); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReadOnly(ctx, into, testOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		wantSeqs(t, loadT(t, r, "p"), "p", 1, want)
		if err := r.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		closeT(t, r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
