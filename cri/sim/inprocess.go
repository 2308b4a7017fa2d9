package sim

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// bufconnSize is the buffer of each direction of an InProcess connection.
// bufconn allocates it whole when a connection is dialed, so a connection
// holds twice this much memory; a full buffer only makes its writer wait
// for the reader, it does not limit message sizes. 256 KiB moves 1,000-pod
// workloads as fast as 1 MiB did (see BenchmarkInProcessPods).
const bufconnSize = 256 << 10

// InProcess serves rt over an in-memory connection (bufconn) and returns a
// client connection to it, for endpoints like "sim://". The returned stop
// func closes the connection and stops the server gracefully, as Serve
// does; it is idempotent and also runs when ctx is done. rt stays usable.
//
// When stop returns, the in-memory connections are closed and hold no
// memory beyond what the caller still references: their buffers are free
// to collect, even if the caller keeps the *grpc.ClientConn. opts are added
// to the client connection's (cri.TracingDialOptions).
func InProcess(ctx context.Context, rt *Runtime, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	return inProcess(ctx, rt, bufconnSize, opts...)
}

// inProcess is InProcess with a buffer size per connection direction.
func inProcess(ctx context.Context, rt *Runtime, size int, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	link := newMemLink(bufconn.Listen(size))
	s := newServer(rt)
	s.Start(link.lis)
	conn, err := grpc.NewClient("passthrough:///actorlet-sim", append([]grpc.DialOption{
		grpc.WithContextDialer(link.dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	}, opts...)...)
	if err != nil {
		s.Shutdown()
		link.close()
		return nil, nil, fmt.Errorf("sim: in-process CRI client: %w", err)
	}
	stop := func() {
		_ = conn.Close()
		s.Shutdown() // also closes the listener
		link.close()
	}
	unhook := context.AfterFunc(ctx, stop)
	return conn, func() {
		unhook()
		stop()
	}, nil
}
