package serve

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// shared answers Version with the same message each time and remembers the
// last request of ListContainers; PodSandboxStatus and GetContainerEvents
// wait until their context is done.
type shared struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	version *runtimeapi.VersionResponse
	lastReq *runtimeapi.ListContainersRequest
	waiting chan struct{} // a waiting call has started
	release chan struct{} // closed: GetContainerEvents sends its event
}

func (s *shared) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return s.version, nil
}

func (s *shared) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	s.lastReq = req
	return &runtimeapi.ListContainersResponse{}, nil
}

func (s *shared) PodSandboxStatus(ctx context.Context, _ *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Hour) // a handler's own derived context
	defer cancel()
	s.waiting <- struct{}{}
	<-ctx.Done()
	return nil, status.FromContextError(ctx.Err()).Err()
}

func (s *shared) GetContainerEvents(_ *runtimeapi.GetEventsRequest, ss runtimeapi.RuntimeService_GetContainerEventsServer) error {
	if err := ss.SendHeader(metadata.MD{}); err != nil { // "subscribed"
		return err
	}
	<-s.release
	if err := ss.Send(&runtimeapi.ContainerEventResponse{ContainerId: "c1"}); err != nil {
		return err
	}
	<-ss.Context().Done()
	return status.FromContextError(ss.Context().Err()).Err()
}

// Over a Direct connection the runtime answers its own calls, Unimplemented
// the others, and client and runtime share no message: what one changes
// the other does not see.
func TestDirectServesARuntimeWithCopies(t *testing.T) {
	ctx := context.Background()
	rt := &shared{version: &runtimeapi.VersionResponse{RuntimeName: "mine"}}
	conn, stop := Direct(rt, DirectOptions{})
	defer stop()
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	v, err := rc.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != "mine" {
		t.Fatalf("Version = %v, %v", v, err)
	}
	v.RuntimeName = "changed by the client"
	if rt.version.RuntimeName != "mine" {
		t.Errorf("the client's change of its reply reached the runtime's message: %q", rt.version.RuntimeName)
	}
	req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: "a"}}
	if _, err := rc.ListContainers(ctx, req); err != nil {
		t.Fatal(err)
	}
	if rt.lastReq == req || rt.lastReq.GetFilter() == req.Filter {
		t.Error("the runtime got the client's own request message, not a copy")
	}
	if rt.lastReq.GetFilter().GetId() != "a" {
		t.Errorf("the runtime got filter %v, want id a", rt.lastReq.GetFilter())
	}
	_, err = runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("ListImages: %v, want Unimplemented", err)
	}
}

// With OwnReplies the client takes the runtime's reply over, no copy made
// (the runtime promised to keep nothing of it); requests are still copies.
func TestDirectOwnRepliesHandsRepliesOver(t *testing.T) {
	ctx := context.Background()
	c := &runtimeapi.Container{Id: "c1", Labels: map[string]string{"a": "b"}}
	rt := listing{shared: &shared{}, c: c}
	conn, stop := Direct(rt, DirectOptions{OwnReplies: true})
	defer stop()
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: "a"}}
	got, err := rc.ListContainers(ctx, req)
	if err != nil || len(got.Containers) != 1 || got.Containers[0].Labels["a"] != "b" {
		t.Fatalf("ListContainers = %v, %v", got, err)
	}
	if got.Containers[0] != c {
		t.Error("the reply's container is a copy: the reply was copied, not handed over")
	}
	if rt.lastReq == req || rt.lastReq.GetFilter() == req.Filter || rt.lastReq.GetFilter().GetId() != "a" {
		t.Errorf("the runtime got %v: the client's own request message, not a copy", rt.lastReq)
	}
}

// listing answers ListContainers with its one container itself (a runtime
// that would break OwnReplies' promise, to see that nothing is copied).
type listing struct {
	*shared
	c *runtimeapi.Container
}

func (l listing) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	l.lastReq = req
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{l.c}}, nil
}

// The interceptors run around each call in order, the first outermost, and
// see the full method name; an error they return is the caller's.
func TestDirectRunsInterceptorsInOrder(t *testing.T) {
	var seen []string
	mark := func(name string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen = append(seen, name+" "+info.FullMethod)
			if name == "refuse" {
				return nil, status.Error(codes.ResourceExhausted, "refused")
			}
			return h(ctx, req)
		}
	}
	conn, stop := Direct(&shared{version: &runtimeapi.VersionResponse{}}, DirectOptions{Unary: []grpc.UnaryServerInterceptor{mark("outer"), mark("refuse")}})
	defer stop()
	_, err := runtimeapi.NewRuntimeServiceClient(conn).Version(context.Background(), &runtimeapi.VersionRequest{})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("Version: %v, want the interceptor's ResourceExhausted", err)
	}
	want := []string{"outer /runtime.v1.RuntimeService/Version", "refuse /runtime.v1.RuntimeService/Version"}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("interceptors saw %q, want %q", seen, want)
	}
}

// A stream's empty headers reach the client before any message, as over
// HTTP/2 (a runtime's "subscribed"); stop ends a call and a stream in
// flight, and later calls fail Unavailable; stop is idempotent.
func TestDirectStopEndsCallsAndStreams(t *testing.T) {
	ctx := context.Background()
	rt := &shared{version: &runtimeapi.VersionResponse{}, waiting: make(chan struct{}, 1), release: make(chan struct{})}
	conn, stop := Direct(rt, DirectOptions{})
	rc := runtimeapi.NewRuntimeServiceClient(conn)

	events, err := rc.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	md, err := events.Header() // returns before the event is sent
	if err != nil || md.Get("content-type") == nil {
		t.Fatalf("stream headers = %v, %v; want content-type", md, err)
	}
	close(rt.release)
	if ev, err := events.Recv(); err != nil || ev.ContainerId != "c1" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	callErr := make(chan error, 1)
	go func() {
		_, err := rc.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: "p"})
		callErr <- err
	}()
	<-rt.waiting
	stop()
	stop()

	deadline := time.After(time.Minute)
	select {
	case err := <-callErr:
		if status.Code(err) != codes.Canceled {
			t.Errorf("the call in flight ended with %v, want Canceled", err)
		}
	case <-deadline:
		t.Fatal("the call in flight did not end after stop")
	}
	if _, err := events.Recv(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("the stream after stop: %v, want its error", err)
	}
	if _, err := rc.Version(ctx, &runtimeapi.VersionRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("Version after stop: %v, want Unavailable", err)
	}
}

// A unary call in flight costs its caller's goroutine and no other: its
// handler runs in it (directUnary), and binding it to the connection's
// life adds no goroutine watching a context (the runtime keeps a
// goroutine's descriptor for good, so a burst of calls would leave the
// process larger); nor does a context the handler derives from its own.
func TestDirectCallsInFlightStartNoWatchers(t *testing.T) {
	const calls = 64
	rt := &shared{version: &runtimeapi.VersionResponse{}, waiting: make(chan struct{}, calls)}
	conn, stop := Direct(rt, DirectOptions{})
	defer stop()
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithCancel(context.Background()) // a node's contexts are the context package's own
	defer cancel()

	before := runtime.NumGoroutine()
	ended := make(chan error, calls)
	for range calls {
		go func() {
			_, err := rc.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: "p"})
			ended <- err
		}()
	}
	for range calls {
		<-rt.waiting
	}
	// Every handler is waiting on its context; the count cannot drop below
	// what they hold until cancel.
	if extra := runtime.NumGoroutine() - before; extra > calls+calls/4 {
		t.Errorf("%d calls in flight hold %d goroutines, want at most %d (the callers')", calls, extra, calls+calls/4)
	}
	cancel()
	for range calls {
		if err := <-ended; status.Code(err) != codes.Canceled {
			t.Errorf("a call ended with %v, want Canceled", err)
		}
	}
}

// eventSender sends one event on each stream and changes it right after
// the send, as a runtime reusing its message may; it then waits for the
// client to have changed what it received.
type eventSender struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	sent     *runtimeapi.ContainerEventResponse
	changed  chan struct{} // closed once the runtime changed its message
	received chan struct{} // closed by the test once the client changed its event
}

func (s *eventSender) GetContainerEvents(_ *runtimeapi.GetEventsRequest, ss runtimeapi.RuntimeService_GetContainerEventsServer) error {
	if err := ss.Send(s.sent); err != nil {
		return err
	}
	s.sent.ContainersStatuses[0].Labels["app"] = "changed by the runtime"
	s.sent.PodSandboxStatus.Id = "changed by the runtime"
	close(s.changed)
	<-s.received
	<-ss.Context().Done()
	return status.FromContextError(ss.Context().Err()).Err()
}

// A stream's messages are copies as well: what the runtime changes after a
// send, the client does not see, and what the client changes in what it
// received, the runtime does not see.
func TestDirectStreamsCopies(t *testing.T) {
	rt := &eventSender{
		sent: &runtimeapi.ContainerEventResponse{
			ContainerId:        "c1",
			PodSandboxStatus:   &runtimeapi.PodSandboxStatus{Id: "p1", Labels: map[string]string{"app": "web"}},
			ContainersStatuses: []*runtimeapi.ContainerStatus{{Id: "c1", Labels: map[string]string{"app": "web"}}},
		},
		changed:  make(chan struct{}),
		received: make(chan struct{}),
	}
	conn, stop := Direct(rt, DirectOptions{})
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := runtimeapi.NewRuntimeServiceClient(conn).GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.Recv()
	if err != nil {
		t.Fatal(err)
	}
	<-rt.changed
	if ev.PodSandboxStatus.GetId() != "p1" || ev.ContainersStatuses[0].GetLabels()["app"] != "web" {
		t.Errorf("the client received %v, want the event as sent (the runtime's later change not seen)", ev)
	}
	ev.ContainersStatuses[0].Labels["app"] = "changed by the client"
	ev.PodSandboxStatus.Labels["app"] = "changed by the client"
	close(rt.received)
	if got := rt.sent.PodSandboxStatus.Labels["app"]; got != "web" {
		t.Errorf("the client's change reached the runtime's message: sandbox label %q", got)
	}
	if got := rt.sent.ContainersStatuses[0].Labels["app"]; got != "changed by the runtime" {
		t.Errorf("the runtime's own message: container label %q", got)
	}
}

// A stream's message is copied once, at its send: the receive takes that
// copy over and allocates nothing (two copies of each event, with a
// sandbox's and its containers' statuses, were most of a starting node's
// stream cost).
func TestDirectStreamReceiveTakesTheCopy(t *testing.T) {
	in := &runtimeapi.ContainerEventResponse{
		ContainerId:        "c1",
		PodSandboxStatus:   &runtimeapi.PodSandboxStatus{Id: "p1", Labels: map[string]string{"app": "web"}},
		ContainersStatuses: []*runtimeapi.ContainerStatus{{Id: "c1", Labels: map[string]string{"app": "web"}}},
	}
	var cl streamCloner
	sent, err := cl.Clone(in)
	if err != nil {
		t.Fatal(err)
	}
	if sent == any(in) {
		t.Fatal("Clone returned the sender's own message")
	}
	out := &runtimeapi.ContainerEventResponse{}
	allocs := testing.AllocsPerRun(100, func() {
		if err := cl.Copy(out, sent); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a stream's receive allocated %.0f times, want 0 (no second copy)", allocs)
	}
	if !proto.Equal(out, in) {
		t.Errorf("received %v, want %v", out, in)
	}
	if err := cl.Copy(&runtimeapi.PodSandboxStatus{}, sent); status.Code(err) != codes.Internal {
		t.Errorf("Copy into another type: %v, want Internal", err)
	}
}
