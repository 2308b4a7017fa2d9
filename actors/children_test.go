package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// childParent spawns one child, stops it, and on its Terminated reports
// what the children set still references once dropStoppedChildren ran.
type childParent struct{ report chan []*actor.PID }

func (p *childParent) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		kid := ctx.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		ctx.Stop(kid)
	case *actor.Terminated:
		dropStoppedChildren(ctx)
		kids := ctx.Children()
		p.report <- kids[:cap(kids)]
	}
}

// TestDropStoppedChildren: once a PodActor's stopped child is gone from its
// children set, nothing in that set's storage references it any more (its
// PID would keep the child's process, mailbox and actor reachable).
func TestDropStoppedChildren(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	report := make(chan []*actor.PID, 1)
	system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &childParent{report: report} }))
	select {
	case kids := <-report:
		for i, pid := range kids {
			if pid != nil {
				t.Errorf("children storage slot %d still holds %v after the child stopped", i, pid)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the child's Terminated never reached its parent")
	}
}
