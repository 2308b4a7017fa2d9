package serve

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is a container runtime that runs in actorlet's own process: the
// CRI v1 RuntimeService and ImageService servers, the interface the
// simulated runtime (cri/sim.Runtime) implements. A runtime of one's own
// embeds runtimeapi.UnimplementedRuntimeServiceServer and
// UnimplementedImageServiceServer and implements what a node calls (see
// InProcess).
type Runtime interface {
	runtimeapi.RuntimeServiceServer
	runtimeapi.ImageServiceServer
}

// InProcessBufferSize is the buffer of each direction of an in-process
// connection. bufconn allocates it whole when a connection is dialed, so a
// connection holds twice this much memory; a full buffer only makes its
// writer wait for the reader, it does not limit message sizes. 256 KiB
// moves 1,000-pod workloads as fast as 1 MiB did (see cri/sim's
// BenchmarkInProcessPods).
const InProcessBufferSize = 256 << 10

// InProcess serves rt over an in-memory connection (bufconn, no socket)
// and returns a client connection to it, for cri.NewFromConn: the node
// then runs pods on rt exactly as on a CRI endpoint. The returned stop
// func closes the connection and stops the server gracefully; it is
// idempotent and also runs when ctx is done. rt stays usable.
//
// What a node calls: Version, RunPodSandbox, StopPodSandbox,
// RemovePodSandbox, PodSandboxStatus, ListPodSandbox, CreateContainer,
// StartContainer, StopContainer, RemoveContainer, ListContainers,
// ContainerStatus, PullImage and ImageStatus to run pods; ExecSync for exec
// probes and hooks; GetContainerEvents if the runtime has events (an
// Unimplemented answer makes the node relist every --relist-period
// instead); ListImages, ImageFsInfo, RemoveImage, the stats calls and
// ReopenContainerLog for image GC, stats and log rotation when those are
// on. An Unimplemented answer elsewhere fails only what asked.
//
// opts are added to the client connection's (cri.TracingDialOptions).
func InProcess(ctx context.Context, rt Runtime, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	s := NewServer(nil, nil)
	runtimeapi.RegisterRuntimeServiceServer(s.GRPC(), rt)
	runtimeapi.RegisterImageServiceServer(s.GRPC(), rt)
	return Connect(ctx, s, InProcessBufferSize, opts...)
}

// Connect starts s on an in-memory listener with buffers of size bytes
// each way and returns a client connection to it (see InProcess). When
// stop returns, the in-memory connections are closed and hold no memory
// beyond what the caller still references: their buffers are free to
// collect, even if the caller keeps the *grpc.ClientConn.
func Connect(ctx context.Context, s *Server, size int, opts ...grpc.DialOption) (*grpc.ClientConn, func(), error) {
	link := newMemLink(bufconn.Listen(size))
	s.Start(link.lis)
	conn, err := grpc.NewClient("passthrough:///actorlet-inprocess", append([]grpc.DialOption{
		grpc.WithContextDialer(link.dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMsgSize), grpc.MaxCallSendMsgSize(MaxMsgSize)),
	}, opts...)...)
	if err != nil {
		s.Shutdown()
		link.close()
		return nil, nil, fmt.Errorf("in-process CRI client: %w", err)
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
