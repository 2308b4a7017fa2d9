package faults

import (
	"context"

	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// UnaryServerInterceptor injects the plan's faults into unary calls. Put it
// last in the server's chain, right before the runtime's handlers.
func (i *Injector) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, c, release, err := i.admit(ctx, shortMethod(info.FullMethod))
		if err != nil {
			return nil, err
		}
		defer release()
		if err := i.before(ctx, c); err != nil {
			return nil, err
		}
		resp, err := handler(ctx, req)
		if ferr := i.after(ctx, c); ferr != nil {
			return nil, ferr
		}
		if err = outcome(ctx, err); err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// StreamServerInterceptor injects the plan's faults into streamed calls:
// GetContainerEvents (its events get the plan's Events faults), and, for a
// server that handles every call as a stream (a forwarding proxy), all
// others as the unary interceptor would.
//
// For GetContainerEvents, error, hang and latency apply when the stream
// opens; error-after makes the subscribed stream fail with the code at its
// first event, hang-after makes it deliver nothing until the caller ends
// it.
func (i *Injector) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, c, release, err := i.admit(ss.Context(), shortMethod(info.FullMethod))
		if err != nil {
			return err
		}
		defer release()
		if err := i.before(ctx, c); err != nil {
			return err
		}
		if c.Method == eventsMethod {
			switch c.Action {
			case FailAfter:
				i.injected(KindErrorAfter, c.Call, zap.Stringer("code", c.Code))
			case HangAfter:
				i.injected(KindHangAfter, c.Call)
			}
			es := i.newEventStream(ctx, ss, c)
			err := handler(srv, es)
			es.close()
			return outcome(ctx, err)
		}
		// A unary call carried as a stream: withhold the reply when a fault
		// replaces it.
		var s grpc.ServerStream = &ctxStream{ServerStream: ss, ctx: ctx}
		if c.Action == FailAfter || c.Action == HangAfter {
			s = &replyless{ServerStream: s}
		}
		err = handler(srv, s)
		if ferr := i.after(ctx, c); ferr != nil {
			return ferr
		}
		return outcome(ctx, err)
	}
}

// ctxStream is a ServerStream with the call's own context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// replyless swallows the replies of a call whose reply a fault replaces.
type replyless struct{ grpc.ServerStream }

func (replyless) SendMsg(any) error { return nil }
