package faults

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// eventStream injects the plan's event faults into the events a
// GetContainerEvents handler sends. Sends are serialised by mu: the
// reorder window's timer sends a held event from its own goroutine.
type eventStream struct {
	grpc.ServerStream
	ctx    context.Context
	inj    *Injector
	c      *call
	window time.Duration

	mu       sync.Mutex
	next     uint64        // number of the next event
	held     any           // a reordered event waiting for the next one
	released chan struct{} // closed when held is sent: ends its window's timer
	closed   bool
	stop     chan struct{} // closed by close: ends every window's timer
	wg       sync.WaitGroup
}

func (i *Injector) newEventStream(ctx context.Context, ss grpc.ServerStream, c *call) *eventStream {
	w := time.Duration(i.plan.Events.ReorderWindow)
	if w <= 0 {
		w = DefaultReorderWindow
	}
	return &eventStream{ServerStream: ss, ctx: ctx, inj: i, c: c, window: w, stop: make(chan struct{})}
}

func (s *eventStream) Context() context.Context { return s.ctx }

// SendMsg sends one event, or not, as the plan decides.
func (s *eventStream) SendMsg(m any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.c.Action {
	case HangAfter: // a silent stream
		return nil
	case FailAfter:
		return status.Errorf(s.c.Code, "injected fault: event stream %s #%d failed at its first event", s.c.Method, s.c.N)
	}
	k := s.next
	s.next++
	a := DecideEvent(s.inj.plan.Events, s.inj.seed, s.c.N, k)
	switch a {
	case Drop:
		s.event(KindEventDrop, k)
		return nil
	case Break:
		s.event(KindStreamBreak, k)
		return status.Errorf(codes.Unavailable, "injected fault: container event stream #%d broken at event %d", s.c.N, k)
	case Reorder:
		if s.held == nil {
			s.event(KindEventReorder, k)
			s.hold(m)
			return nil
		}
	case Duplicate:
		s.event(KindEventDuplicate, k)
		if err := s.ServerStream.SendMsg(m); err != nil {
			return err
		}
	}
	if err := s.ServerStream.SendMsg(m); err != nil {
		return err
	}
	return s.flushLocked()
}

// hold keeps m back until the next event is sent or the window passes.
func (s *eventStream) hold(m any) {
	s.held = m
	released := make(chan struct{})
	s.released = released
	t := s.inj.clock.NewTimer(s.window)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-t.C():
			s.mu.Lock()
			if !s.closed && s.released == released {
				_ = s.flushLocked() // a failed send fails the handler's next send too
			}
			s.mu.Unlock()
		case <-released:
			t.Stop()
		case <-s.stop:
			t.Stop()
		}
	}()
}

// flushLocked sends the held event, if any.
func (s *eventStream) flushLocked() error {
	if s.held == nil {
		return nil
	}
	m := s.held
	s.held = nil
	close(s.released)
	s.released = nil
	return s.ServerStream.SendMsg(m)
}

// close ends the window's timer; a held event is lost with the stream.
// It must be called when the handler has returned, before the call ends.
func (s *eventStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
}

func (s *eventStream) event(k Kind, n uint64) {
	s.inj.injected(k, s.c.Call, zap.Uint64("event", n))
}
