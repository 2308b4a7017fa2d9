package actors

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// A podContext ends as a context.WithCancel child does: by its cancel (the
// contexts derived from it are done when cancel returns, as a cancelCtx's
// children are) or with its parent; it passes its parent's values on and
// its cause is its own; and once the contexts derived from it are gone it
// holds nothing of them.
func TestPodContextEndsAsWithCancel(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancelParent()
	c := newPodContext(parent)
	cancel := c.Cancel
	if got := c.Value(ctxKey{}); got != "v" {
		t.Fatalf("Value = %v, want the parent's", got)
	}

	call, endCall := context.WithTimeout(c, time.Hour)
	if len(c.after) != 1 {
		t.Fatalf("a derived context left %d entries, want 1", len(c.after))
	}
	endCall()
	if c.after != nil {
		t.Fatalf("after the derived context ended the podContext holds %d entries (%v), want none", len(c.after), c.after)
	}
	if !errors.Is(call.Err(), context.Canceled) {
		t.Fatalf("the derived context: %v", call.Err())
	}

	call, endCall = context.WithTimeout(c, time.Hour)
	defer endCall()
	watched := make(chan struct{})
	stop := context.AfterFunc(c, func() { close(watched) })
	defer stop()
	cancel()
	if c.Err() != context.Canceled || context.Cause(c) != context.Canceled {
		t.Fatalf("after cancel: Err %v, Cause %v; want Canceled", c.Err(), context.Cause(c))
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done is open after cancel")
	}
	if !errors.Is(call.Err(), context.Canceled) {
		t.Fatalf("a derived context after cancel returned: %v, want Canceled", call.Err())
	}
	<-watched // context.AfterFunc runs its function in a goroutine of its own
	if parent.Err() != nil {
		t.Fatal("cancel ended the parent")
	}
	cancel() // idempotent
}

// The parent's end ends a podContext and what derives from it; a podContext
// whose parent is one joins it by a slot that its own cancel gives back.
func TestPodContextEndsWithItsParent(t *testing.T) {
	root, cancelRoot := context.WithCancel(context.Background())
	sup := newPodContext(root)
	defer sup.Cancel()
	pod := newPodContext(sup)
	other := newPodContext(sup)
	defer other.Cancel()
	if len(sup.after) != 2 {
		t.Fatalf("the parent holds %d entries for its two children, want 2", len(sup.after))
	}
	pod.Cancel()
	if len(sup.after) != 1 || sup.after[0].i != 0 {
		t.Fatalf("after a child's cancel the parent holds %v, want the other child's entry at 0", sup.after)
	}
	if other.Err() != nil {
		t.Fatal("a sibling's cancel ended a podContext")
	}

	call, endCall := context.WithTimeout(other, time.Hour)
	defer endCall()
	cancelRoot()
	select { // root joins sup through context.AfterFunc: in a goroutine
	case <-sup.Done():
	case <-time.After(time.Minute):
		t.Fatal("the podContext did not end with its parent")
	}
	if sup.Err() != context.Canceled || other.Err() != context.Canceled || call.Err() != context.Canceled {
		t.Fatalf("after the parent's end: %v, the child's %v, the derived %v; want Canceled", sup.Err(), other.Err(), call.Err())
	}

	late := newPodContext(sup)
	defer late.Cancel()
	if late.Err() != context.Canceled {
		t.Fatalf("a podContext of a parent that ended: %v, want Canceled", late.Err())
	}
}

// A PodActor's context joins the Supervisor's with three allocations (the
// podContext, its Done channel, its slot's entry): no closure to cancel
// it, to be cancelled by the parent, or to leave the parent, which every
// running pod would keep (about 80 bytes).
func TestPodContextJoinsCheaply(t *testing.T) {
	sup := newPodContext(context.Background())
	defer sup.Cancel()
	// Another child keeps the parent's slice, as a node's other pods do.
	stay := newPodContext(sup)
	allocs := testing.AllocsPerRun(100, func() {
		c := newPodContext(sup)
		c.Cancel()
	})
	if allocs > 3 {
		t.Fatalf("a podContext of a podContext costs %v allocations, want at most 3", allocs)
	}
	if len(sup.after) != 1 || sup.after[0].kid != stay {
		t.Fatalf("the cancelled children left %d entries in their parent, want the one of the child still there", len(sup.after))
	}
}
