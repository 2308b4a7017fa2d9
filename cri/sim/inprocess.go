package sim

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/actorlet/actorlet/cri/serve"
)

// bufconnSize is the buffer of each direction of an InProcess connection
// (see serve.InProcessBufferSize).
const bufconnSize = serve.InProcessBufferSize

// InProcess serves rt over an in-memory connection (bufconn) and returns a
// client connection to it, for endpoints like "sim://", with rt's fault
// plan (Options.Faults) applied as over a socket. The returned stop func
// closes the connection and stops the server gracefully, as Serve does; it
// is idempotent and also runs when ctx is done. rt stays usable. See
// serve.Connect for what stop releases. opts are added to the client
// connection's (cri.TracingDialOptions).
func InProcess(ctx context.Context, rt *Runtime, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	return inProcess(ctx, rt, bufconnSize, opts...)
}

// inProcess is InProcess with a buffer size per connection direction.
func inProcess(ctx context.Context, rt *Runtime, size int, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	return serve.Connect(ctx, newServer(rt), size, opts...)
}

// Direct connects to rt without a transport (serve.Direct): each call is
// a function call on rt, with rt's fault plan (Options.Faults) applied as
// over a socket. It is what "sim://" uses: per call it costs a fraction of
// InProcess's gRPC over bufconn (see BenchmarkInProcessPods). stop ends
// the calls and streams in flight; rt stays usable. clientStats (nil:
// none) sees each call as a client's stats handler does
// (cri.TracingStatsHandler).
//
// The caller takes rt's replies over without a copy
// (serve.DirectOptions.OwnReplies): rt makes each reply for its call and
// keeps nothing of it (TestRepliesShareNothing), and the fault plan's
// interceptor passes the reply on or fails the call.
func Direct(rt *Runtime, clientStats stats.Handler) (conn grpc.ClientConnInterface, stop func()) {
	o := serve.DirectOptions{ClientStats: clientStats, OwnReplies: true}
	if rt.faults != nil {
		o.Unary = append(o.Unary, rt.faults.UnaryServerInterceptor())
		o.Stream = append(o.Stream, rt.faults.StreamServerInterceptor())
	}
	return serve.Direct(rt, o)
}
