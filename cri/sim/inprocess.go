package sim

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// bufconnSize is the in-memory connection buffer of InProcess.
const bufconnSize = 1 << 20

// InProcess serves rt over an in-memory connection (bufconn) and returns a
// client connection to it, for endpoints like "sim://". The returned stop
// func closes the connection and stops the server gracefully, as Serve
// does; it is idempotent and also runs when ctx is done. rt stays usable.
func InProcess(ctx context.Context, rt *Runtime) (*grpc.ClientConn, func(), error) {
	lis := bufconn.Listen(bufconnSize)
	s := newServer(rt)
	s.start(lis)
	conn, err := grpc.NewClient("passthrough:///actorlet-sim",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	)
	if err != nil {
		s.shutdown()
		return nil, nil, fmt.Errorf("sim: in-process CRI client: %w", err)
	}
	stop := func() {
		_ = conn.Close()
		s.shutdown()
	}
	unhook := context.AfterFunc(ctx, stop)
	return conn, func() {
		unhook()
		stop()
	}, nil
}
