package sim

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMsgSize bounds gRPC messages both ways: large enough for List calls
// on nodes with many thousands of containers.
const maxMsgSize = 64 << 20

// gracePeriod bounds GracefulStop; then remaining calls are cut off.
const gracePeriod = 5 * time.Second

// server is one gRPC server for a Runtime. Calls and streams it serves see
// their context canceled when it shuts down, so that long waits (event
// streams, StopContainer, latencies) do not hold up GracefulStop, and a
// call interrupted during its latency has no effect.
type server struct {
	grpc     *grpc.Server
	ctx      context.Context // canceled at shutdown
	cancel   context.CancelFunc
	served   chan struct{} // closed when grpc.Serve returned
	serveErr error         // what it returned; read after served
	stopOnce sync.Once
}

func newServer(rt *Runtime) *server {
	s := &server{served: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	unary, stream := []grpc.UnaryServerInterceptor{s.unary}, []grpc.StreamServerInterceptor{s.stream}
	if rt.faults != nil {
		// Inside bind: a call cut at shutdown is not a fault.
		unary = append(unary, rt.faults.UnaryServerInterceptor())
		stream = append(stream, rt.faults.StreamServerInterceptor())
	}
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMsgSize),
		grpc.MaxSendMsgSize(maxMsgSize),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	)
	runtimeapi.RegisterRuntimeServiceServer(s.grpc, rt)
	runtimeapi.RegisterImageServiceServer(s.grpc, rt)
	return s
}

// start serves lis in a goroutine that ends with shutdown (or a failure).
func (s *server) start(lis net.Listener) {
	go func() {
		s.serveErr = s.grpc.Serve(lis)
		close(s.served)
	}()
}

// bind returns a child of ctx that is also canceled at shutdown.
func (s *server) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { unhook(); cancel() }
}

func (s *server) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, done := s.bind(ctx)
	defer done()
	return h(ctx, req)
}

func (s *server) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, done := s.bind(ss.Context())
	defer done()
	return h(srv, &boundStream{ServerStream: ss, ctx: ctx})
}

type boundStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (b *boundStream) Context() context.Context { return b.ctx }

// shutdown ends all calls and streams and stops the server; idempotent.
// It returns after the serving goroutine has ended.
func (s *server) shutdown() {
	s.stopOnce.Do(func() {
		s.cancel()
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
