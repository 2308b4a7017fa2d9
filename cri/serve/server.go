package serve

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
)

// MaxMsgSize bounds gRPC messages both ways: large enough for List calls
// on nodes with many thousands of containers.
const MaxMsgSize = 64 << 20

// gracePeriod bounds GracefulStop; then remaining calls are cut off.
const gracePeriod = 5 * time.Second

// Server is a gRPC server whose calls and streams see their context
// canceled when it shuts down, so that long waits (event streams, hangs,
// latencies) do not hold up a graceful stop. Register services on GRPC()
// before Start.
type Server struct {
	grpc     *grpc.Server
	life     *life         // ended at shutdown (gRPC then refuses new calls itself)
	served   chan struct{} // closed when grpc.Serve returned
	serveErr error         // what it returned; read after served
	stopOnce sync.Once
}

// NewServer returns a Server whose calls go through the given interceptors
// (after its own, which binds each call to the server's life), with
// MaxMsgSize both ways, plus opts.
func NewServer(unary []grpc.UnaryServerInterceptor, stream []grpc.StreamServerInterceptor, opts ...grpc.ServerOption) *Server {
	s := &Server{served: make(chan struct{}), life: newLife(nil)}
	opts = append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMsgSize),
		grpc.MaxSendMsgSize(MaxMsgSize),
		grpc.ChainUnaryInterceptor(append([]grpc.UnaryServerInterceptor{s.life.unary}, unary...)...),
		grpc.ChainStreamInterceptor(append([]grpc.StreamServerInterceptor{s.life.stream}, stream...)...),
	}, opts...)
	s.grpc = grpc.NewServer(opts...)
	return s
}

// GRPC is the server to register services on.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Start serves lis in a goroutine that ends with Shutdown (or a failure).
func (s *Server) Start(lis net.Listener) {
	go func() {
		s.serveErr = s.grpc.Serve(lis)
		close(s.served)
	}()
}

// Run serves on listen (see Listen) until ctx is done, then shuts down and
// returns nil; it returns an error if it cannot listen or serving fails.
// The socket file is removed at the end.
func (s *Server) Run(ctx context.Context, listen string) error {
	lis, cleanup, err := Listen(listen)
	if err != nil {
		return err
	}
	defer cleanup()
	s.Start(lis)
	select {
	case <-s.served:
		s.Shutdown()
		return fmt.Errorf("serving CRI on %s: %w", listen, s.serveErr)
	case <-ctx.Done():
		s.Shutdown()
		return nil
	}
}

// Shutdown ends all calls and streams and stops the server; idempotent.
// It returns after the serving goroutine has ended (Start must have been
// called).
func (s *Server) Shutdown() {
	s.stopOnce.Do(func() {
		s.life.end()
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		t := time.NewTimer(gracePeriod)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			s.grpc.Stop()
			<-done
		}
		<-s.served
	})
}
