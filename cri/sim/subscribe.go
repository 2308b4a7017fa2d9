package sim

import runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

// Subscription is an in-process subscription to the runtime's container
// events (the events GetContainerEvents streams), read by polling instead
// of from a stream: for a caller that drives the runtime from a single
// goroutine, such as a deterministic simulation, where a stream's
// goroutine would make the order of things depend on scheduling.
//
// Guarantees: Take returns the events in the order the changes happened,
// each once. Like a stream, a subscription ends when the runtime restarts
// (Runtime.Restart) or closes: Take then reports it closed, after the
// events queued before the end; subscribe again to go on.
type Subscription struct {
	r *Runtime
	s *subscriber
}

// Subscribe starts a subscription: it sees every change from now on.
func (r *Runtime) Subscribe() *Subscription {
	return &Subscription{r: r, s: r.events.subscribe()}
}

// Take returns the events queued since the last Take (nil if none), and
// whether the subscription is still open. It never blocks.
func (s *Subscription) Take() (events []*runtimeapi.ContainerEventResponse, open bool) {
	for more := true; more; {
		var batch []*runtimeapi.ContainerEventResponse
		batch, more = s.s.take()
		events = append(events, batch...)
	}
	select {
	case <-s.s.done:
		// Events queued after the end cannot be there: publish only
		// reaches current subscribers.
		return events, false
	default:
		return events, true
	}
}

// Close ends the subscription. Idempotent.
func (s *Subscription) Close() { s.r.events.unsubscribe(s.s) }
