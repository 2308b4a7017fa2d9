package sim

import (
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/serve"
)

// maxMsgSize bounds gRPC messages both ways (clients of InProcess too).
const maxMsgSize = serve.MaxMsgSize

// newServer returns a gRPC server for rt. Calls and streams it serves see
// their context canceled when it shuts down, so that long waits (event
// streams, StopContainer, latencies) do not hold up the graceful stop, and
// a call interrupted during its latency has no effect. With
// Options.Faults, the fault injector is the innermost interceptor: a call
// cut at shutdown is not a fault.
func newServer(rt *Runtime) *serve.Server {
	var unary []grpc.UnaryServerInterceptor
	var stream []grpc.StreamServerInterceptor
	if rt.faults != nil {
		unary = append(unary, rt.faults.UnaryServerInterceptor())
		stream = append(stream, rt.faults.StreamServerInterceptor())
	}
	s := serve.NewServer(unary, stream)
	runtimeapi.RegisterRuntimeServiceServer(s.GRPC(), rt)
	runtimeapi.RegisterImageServiceServer(s.GRPC(), rt)
	return s
}
