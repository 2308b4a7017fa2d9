package journal

import (
	"context"
	"testing"
)

// Each writable open counts one more incarnation, also across closes; a
// read-only open counts none.
func TestIncarnationGrowsPerWritableOpen(t *testing.T) {
	dir := t.TempDir()
	for want := uint64(1); want <= 3; want++ {
		j, err := Open(context.Background(), dir, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Incarnation(); got != want {
			t.Errorf("open %d: incarnation %d", want, got)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenReadOnly(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Incarnation(); got != 0 {
		t.Errorf("read-only open: incarnation %d, want 0", got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := Open(context.Background(), dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if got := j.Incarnation(); got != 4 {
		t.Errorf("after a read-only open: incarnation %d, want 4", got)
	}
}
