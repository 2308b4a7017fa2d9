package serve

import (
	"context"
	"sync"

	"google.golang.org/grpc"
)

// life binds the calls a server or a Direct connection serves to its own
// life: a call or stream sees its context canceled when the life ends, so
// that long waits (event streams, hangs, latencies) do not hold up a stop.
// A call that arrives after the end fails with the life's stopped error,
// or, without one, runs with its context canceled.
type life struct {
	ctx     context.Context
	cancel  context.CancelFunc
	once    sync.Once
	stopped error // the answer to a call after end; nil: none
}

func newLife(stopped error) *life {
	l := &life{stopped: stopped}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// end cancels every call and stream in flight; idempotent.
func (l *life) end() { l.once.Do(l.cancel) }

// bind returns a child of ctx that is also canceled at end.
func (l *life) bind(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if l.stopped != nil && l.ctx.Err() != nil {
		return nil, nil, l.stopped
	}
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(l.ctx, cancel)
	return ctx, func() { unhook(); cancel() }, nil
}

// unary is the interceptor that binds a unary call.
func (l *life) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, done, err := l.bind(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return h(ctx, req)
}

// stream is the interceptor that binds a stream.
func (l *life) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, done, err := l.bind(ss.Context())
	if err != nil {
		return err
	}
	defer done()
	return h(srv, &boundStream{ServerStream: ss, ctx: ctx})
}

// boundStream is a stream with its context bound to a life.
type boundStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (b *boundStream) Context() context.Context { return b.ctx }
