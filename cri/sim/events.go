package sim

import (
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// broker fans container events out to subscribers. Each subscriber has its
// own unbounded FIFO queue, so a slow or stuck subscriber costs memory but
// never blocks the runtime. Events are published with the runtime's mutex
// held, so every subscriber sees them in the order the changes happened.
type broker struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	n      atomic.Int32 // len(subs), read without mu to skip building events
	closed bool
	doneCh chan struct{} // closed by close
}

type subscriber struct {
	mu     sync.Mutex
	queue  []*runtimeapi.ContainerEventResponse
	notify chan struct{} // capacity 1: "queue may be non-empty"
	done   chan struct{} // closed when the broker closes or disconnects it
}

func newBroker() *broker {
	return &broker{subs: make(map[*subscriber]struct{}), doneCh: make(chan struct{})}
}

// done is closed when the broker (and so the Runtime) is closed.
func (b *broker) done() <-chan struct{} { return b.doneCh }

func (b *broker) subscribe() *subscriber {
	s := &subscriber{notify: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.done)
		return s
	}
	b.subs[s] = struct{}{}
	b.n.Store(int32(len(b.subs)))
	return s
}

func (b *broker) unsubscribe(s *subscriber) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, s)
	b.n.Store(int32(len(b.subs)))
}

func (b *broker) active() bool { return b.n.Load() > 0 }

// publish queues ev for every subscriber. Subscribers share ev: it must
// not be modified afterwards.
func (b *broker) publish(ev *runtimeapi.ContainerEventResponse) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.mu.Lock()
		s.queue = append(s.queue, ev)
		s.mu.Unlock()
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// disconnect ends every current subscription (a restart); later
// subscriptions work.
func (b *broker) disconnect() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		close(s.done)
		delete(b.subs, s)
	}
	b.n.Store(0)
}

func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.doneCh)
	for s := range b.subs {
		close(s.done)
	}
}

// sendBatch is the most events a stream takes from its queue at once.
const sendBatch = 64

// take removes up to sendBatch events from the head of the queue. more
// reports whether events remain.
func (s *subscriber) take() (batch []*runtimeapi.ContainerEventResponse, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.queue), sendBatch)
	batch = make([]*runtimeapi.ContainerEventResponse, n)
	copy(batch, s.queue)
	clear(s.queue[:n]) // drop references for the GC
	s.queue = s.queue[n:]
	if len(s.queue) == 0 {
		s.queue = nil // release the backing array
	}
	return batch, len(s.queue) > 0
}

// emitLocked publishes an event about containerID (a container of sb, or
// sb itself) with the sandbox's status and the statuses of all its
// containers, as containerd does. For the sandbox's own DELETED event the
// status is the sandbox's last one (containerd sends none, because it
// already forgot the sandbox). r.mu must be held.
func (r *Runtime) emitLocked(containerID string, sb *sandbox, typ runtimeapi.ContainerEventType) {
	if !r.events.active() {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        containerID,
		ContainerEventType: typ,
		CreatedAt:          r.now(),
	}
	if sb != nil {
		ev.PodSandboxStatus = sb.status()
		for _, c := range sb.sortedContainers() {
			ev.ContainersStatuses = append(ev.ContainersStatuses, r.containerStatusLocked(c))
		}
	}
	r.events.publish(ev)
}

// GetContainerEvents streams every state change from the moment of the
// call: CONTAINER_CREATED/STARTED/STOPPED/DELETED_EVENT for containers,
// and for sandboxes (with the sandbox ID as container ID) CREATED and
// STARTED on RunPodSandbox, STOPPED on StopPodSandbox, DELETED on
// RemovePodSandbox.
//
// The server sends the response header as soon as the subscription is in
// place: a client that has received it (grpc.ClientStream.Header returned)
// sees every later change. The stream ends when the client cancels it or
// the Runtime is closed or restarted (Unavailable).
func (r *Runtime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	ctx := stream.Context()
	if err := r.wait(ctx, "GetContainerEvents"); err != nil {
		return err
	}
	sub := r.events.subscribe()
	defer r.events.unsubscribe(sub)
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.done:
			return status.Error(codes.Unavailable, "container events subscription closed by server")
		case <-sub.notify:
		}
		for more := true; more; {
			var batch []*runtimeapi.ContainerEventResponse
			batch, more = sub.take()
			for _, ev := range batch {
				if err := stream.Send(ev); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// sortedContainers returns a copy of sb's containers, oldest first.
func (sb *sandbox) sortedContainers() []*container {
	return slices.Clone(sb.containers)
}
