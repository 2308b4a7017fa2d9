package actors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// blockingLister lists nothing: each call blocks until its context ends,
// and counts the calls that began and that returned.
type blockingLister struct {
	began    chan struct{}
	returned atomic.Int32
}

func (l *blockingLister) ListPodObserved(ctx context.Context, _ string) (*pb.RuntimeObserved, error) {
	l.began <- struct{}{}
	<-ctx.Done()
	l.returned.Add(1)
	return nil, ctx.Err()
}

// workersHost is a podActor reduced to its ContainerActors: at Started it
// sends one of them a refresh; at Stopping it does what the PodActor does
// (cancel its context, stopWorkers) and reports how many calls had
// returned then.
type workersHost struct {
	a        *podActor
	kids     chan int // children right after the worker was spawned
	stopped  chan int32
	returned func() int32
}

func (h *workersHost) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		h.a.ctx = newPodContext(context.Background())
		h.a.toWorker(ctx, "sandbox", &refresh{})
		h.kids <- len(ctx.Children())
	case *actor.Stopping:
		h.a.ctx.Cancel()
		h.a.stopWorkers(ctx)
		h.stopped <- h.returned()
	}
}

// TestWorkersAreNoChildren: a PodActor's ContainerActors are not its
// children in protoactor's sense, so that a running pod's PodActor keeps no
// children set (about 600 bytes per pod once emptied); and a stopping
// PodActor still waits for the worker in a call, as protoactor waits for a
// stopping actor's children: the call has returned before the stop goes on.
func TestWorkersAreNoChildren(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	l := &blockingLister{began: make(chan struct{}, 1)}
	d := &Deps{Lister: l}
	d.withDefaults()
	h := &workersHost{a: &podActor{uid: "uid-p", deps: d}, kids: make(chan int, 1), stopped: make(chan int32, 1), returned: l.returned.Load}
	pid := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return h }))
	const wait = 10 * time.Second
	select {
	case n := <-h.kids:
		if n != 0 {
			t.Errorf("the PodActor has %d children after spawning a ContainerActor, want 0", n)
		}
	case <-time.After(wait):
		t.Fatal("the host actor never started")
	}
	select {
	case <-l.began:
	case <-time.After(wait):
		t.Fatal("the ContainerActor never called the lister")
	}
	system.Root.Stop(pid)
	select {
	case n := <-h.stopped:
		if n != 1 {
			t.Errorf("stopWorkers returned with %d calls returned, want the one in flight", n)
		}
	case <-time.After(wait):
		t.Fatal("the host actor never stopped")
	}
}

// quickLister lists nothing, at once.
type quickLister struct{}

func (quickLister) ListPodObserved(context.Context, string) (*pb.RuntimeObserved, error) {
	return &pb.RuntimeObserved{}, nil
}

// chainHost is a podActor reduced to its workers, turn by turn as
// podActor.Receive: it asks the "sandbox" worker for a listing, and when
// the reply comes asks the same worker again in the same turn; it reports
// the worker each reply came from, and the workers left after each turn.
type chainHost struct {
	a       *podActor
	replies chan *actor.PID
	left    chan int // workers after the turn of each reply
	n       int
}

func (h *chainHost) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		h.a.ctx = newPodContext(context.Background())
		h.a.toWorker(ctx, "sandbox", &refresh{})
	case *listed:
		h.a.replied(ctx, ctx.Sender())
		h.replies <- ctx.Sender()
		if h.n++; h.n == 1 {
			h.a.toWorker(ctx, "sandbox", &refresh{}) // the next effect, decided in the reply's turn
		}
	}
	h.a.stopIdleWorkers(ctx)
	if _, ok := ctx.Message().(*listed); ok {
		h.left <- len(h.a.workers)
	}
}

// A worker's reply that leads, in the same turn, to the next message for
// the same worker finds it still there: one ContainerActor carries a pod's
// pull, create and start, where stopping it at each reply spawned one per
// effect. Once a turn leaves it idle, it is stopped: between turns a pod
// has workers only while they work.
func TestIdleWorkerServesTheNextEffectOfItsTurn(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	d := &Deps{Lister: quickLister{}}
	d.withDefaults()
	h := &chainHost{a: &podActor{uid: "uid-p", deps: d}, replies: make(chan *actor.PID, 2), left: make(chan int, 2)}
	system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return h }))
	const wait = 10 * time.Second
	var from [2]*actor.PID
	var left [2]int
	for i := range from {
		select {
		case from[i] = <-h.replies:
			left[i] = <-h.left
		case <-time.After(wait):
			t.Fatalf("reply %d never came", i+1)
		}
	}
	if !from[0].Equal(from[1]) {
		t.Errorf("the second listing was answered by %s, the first by %s: want the same worker", from[1].Id, from[0].Id)
	}
	if left[0] != 1 || left[1] != 0 {
		t.Errorf("workers after the two replies' turns: %v, want [1 0] (kept for the next listing, then stopped)", left)
	}
}
