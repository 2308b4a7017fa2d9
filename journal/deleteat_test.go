package journal

import (
	"context"
	"errors"
	"testing"
)

// DeleteAt deletes only a pod whose stream still ends where the caller saw
// it end.
func TestDeleteAtIsConditional(t *testing.T) {
	ctx := context.Background()
	j := openT(t, t.TempDir(), testOptions(t))
	defer closeT(t, j)
	appendT(t, j, "p", evs("p", 1, 3)...)
	if err := j.DeleteAt(ctx, "p", 2); !errors.Is(err, ErrSequence) {
		t.Fatalf("DeleteAt a stale seq: %v, want ErrSequence", err)
	}
	if err := j.DeleteAt(ctx, "none", 0); !errors.Is(err, ErrSequence) {
		t.Fatalf("DeleteAt a pod with nothing stored: %v, want ErrSequence", err)
	}
	wantSeqs(t, loadT(t, j, "p"), "p", 1, 3)
	if err := j.SaveSnapshot(ctx, snapshotAt("p", 3)); err != nil {
		t.Fatal(err)
	}
	if err := j.DeleteAt(ctx, "p", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Load(ctx, "p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after DeleteAt: %v", err)
	}
	if err := j.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
