package faults

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRuntime counts the calls that reach it. RunPodSandbox waits for
// gate (if set) or its context; GetContainerEvents sends events, then
// returns (or, with hold, waits for its context).
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	versions, sandboxes, subscriptions atomic.Int32
	gate                               chan struct{}
	events                             []*runtimeapi.ContainerEventResponse
	hold                               bool
}

func (f *fakeRuntime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	f.versions.Add(1)
	return &runtimeapi.VersionResponse{RuntimeName: "fake"}, nil
}

func (f *fakeRuntime) RunPodSandbox(ctx context.Context, _ *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.sandboxes.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: "sb"}, nil
}

func (f *fakeRuntime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, s grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	f.subscriptions.Add(1)
	if err := s.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	for _, ev := range f.events {
		if err := s.Send(ev); err != nil {
			return err
		}
	}
	if f.hold {
		<-s.Context().Done()
		return s.Context().Err()
	}
	return nil
}

// serve runs f behind inj's interceptors and returns a client.
func serve(t *testing.T, inj *Injector, f *fakeRuntime) runtimeapi.RuntimeServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.UnaryInterceptor(inj.UnaryServerInterceptor()), grpc.StreamInterceptor(inj.StreamServerInterceptor()))
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	return runtimeapi.NewRuntimeServiceClient(conn)
}

func newInjector(t *testing.T, p *Plan, opts Options) *Injector {
	t.Helper()
	opts.Logger = zaptest.NewLogger(t)
	inj, err := New(p, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	return inj
}

func anyMethod(f RPCFaults) *Plan { return &Plan{RPCs: map[string]RPCFaults{AnyMethod: f}} }

func codesOf(cs ...codes.Code) []Code {
	out := make([]Code, len(cs))
	for i, c := range cs {
		out[i] = Code(c)
	}
	return out
}

func wantCode(t *testing.T, err error, want codes.Code, what string) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("%s: %v (code %v), want %v", what, err, got, want)
	}
}

// waitFor polls cond until it holds; it fails the test after a generous
// deadline (a hang), never asserting how long it took.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func total(inj *Injector, k Kind) int64 { return inj.Totals()[k] }

func TestErrorBeforeHasNoEffect(t *testing.T) {
	inj := newInjector(t, anyMethod(RPCFaults{Error: 1, Codes: codesOf(codes.ResourceExhausted)}), Options{})
	f := &fakeRuntime{}
	c := serve(t, inj, f)
	for range 3 {
		_, err := c.Version(t.Context(), &runtimeapi.VersionRequest{})
		wantCode(t, err, codes.ResourceExhausted, "Version")
	}
	if n := f.versions.Load(); n != 0 {
		t.Fatalf("%d calls reached the runtime", n)
	}
	if got := inj.Counts(); len(got) != 1 || got[0] != (Count{Kind: KindError, Method: "Version", N: 3}) {
		t.Fatalf("counts %+v", got)
	}
}

func TestErrorAfterTakesEffect(t *testing.T) {
	inj := newInjector(t, anyMethod(RPCFaults{ErrorAfter: 1, Codes: codesOf(codes.DeadlineExceeded)}), Options{})
	f := &fakeRuntime{}
	c := serve(t, inj, f)
	_, err := c.RunPodSandbox(t.Context(), &runtimeapi.RunPodSandboxRequest{})
	wantCode(t, err, codes.DeadlineExceeded, "RunPodSandbox")
	if n := f.sandboxes.Load(); n != 1 {
		t.Fatalf("%d calls reached the runtime, want 1", n)
	}
	if n := total(inj, KindErrorAfter); n != 1 {
		t.Fatalf("error-after count %d", n)
	}
}

func TestHangBeforeUntilTheCallerGivesUp(t *testing.T) {
	inj := newInjector(t, anyMethod(RPCFaults{Hang: 1}), Options{})
	f := &fakeRuntime{}
	c := serve(t, inj, f)

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Version(ctx, &runtimeapi.VersionRequest{})
		errc <- err
	}()
	waitFor(t, "the call to hang", func() bool { return total(inj, KindHang) == 1 })
	cancel()
	wantCode(t, <-errc, codes.Canceled, "canceled Version")

	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Version(ctx, &runtimeapi.VersionRequest{})
	wantCode(t, err, codes.DeadlineExceeded, "Version with a deadline")
	if n := f.versions.Load(); n != 0 {
		t.Fatalf("%d hung calls reached the runtime", n)
	}
}

func TestHangAfterTakesEffect(t *testing.T) {
	inj := newInjector(t, anyMethod(RPCFaults{HangAfter: 1}), Options{})
	f := &fakeRuntime{}
	c := serve(t, inj, f)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{})
		errc <- err
	}()
	waitFor(t, "the reply to be withheld", func() bool { return total(inj, KindHangAfter) == 1 })
	if n := f.sandboxes.Load(); n != 1 {
		t.Fatalf("%d calls reached the runtime, want 1", n)
	}
	cancel()
	wantCode(t, <-errc, codes.Canceled, "RunPodSandbox")
}

func TestLatencyRunsOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	inj := newInjector(t, anyMethod(RPCFaults{Latency: Latency{Distribution: Fixed, Value: Duration(time.Hour)}}), Options{Clock: clk})
	f := &fakeRuntime{}
	c := serve(t, inj, f)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Version(t.Context(), &runtimeapi.VersionRequest{})
		errc <- err
	}()
	waitFor(t, "the latency timer", clk.HasWaiters)
	if n := f.versions.Load(); n != 0 {
		t.Fatal("the call reached the runtime during its latency")
	}
	clk.Step(time.Hour)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := f.versions.Load(); n != 1 {
		t.Fatalf("%d calls reached the runtime, want 1", n)
	}

	// Given up during the latency: no effect.
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		_, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{})
		errc <- err
	}()
	waitFor(t, "the latency timer", clk.HasWaiters)
	cancel()
	wantCode(t, <-errc, codes.Canceled, "RunPodSandbox canceled during its latency")
	clk.Step(2 * time.Hour)
	if n := f.sandboxes.Load(); n != 0 {
		t.Fatal("a call canceled during its latency reached the runtime")
	}
	if n := total(inj, KindLatency); n != 2 {
		t.Fatalf("latency count %d, want 2", n)
	}
}

// TestRestartCutsCallsAndStreams: a restart on demand ends the calls and
// streams in flight with Unavailable, refuses calls for the downtime (on
// the clock) and tells the runtime.
func TestRestartCutsCallsAndStreams(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	var mu sync.Mutex
	var modes []RestartMode
	inj := newInjector(t, &Plan{}, Options{Clock: clk, Restart: func(m RestartMode) {
		mu.Lock()
		modes = append(modes, m)
		mu.Unlock()
	}})
	f := &fakeRuntime{gate: make(chan struct{}), hold: true}
	c := serve(t, inj, f)

	stream, err := c.GetContainerEvents(t.Context(), &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Header(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.RunPodSandbox(t.Context(), &runtimeapi.RunPodSandboxRequest{})
		errc <- err
	}()
	waitFor(t, "RunPodSandbox to reach the runtime", func() bool { return f.sandboxes.Load() == 1 })

	if err := inj.Restart(RestartReboot, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-errc, codes.Unavailable, "RunPodSandbox in flight during the restart")
	_, err = stream.Recv()
	wantCode(t, err, codes.Unavailable, "event stream open during the restart")
	_, err = c.Version(t.Context(), &runtimeapi.VersionRequest{})
	wantCode(t, err, codes.Unavailable, "Version during the downtime")
	if n := f.versions.Load(); n != 0 {
		t.Fatal("a call reached the runtime during the downtime")
	}
	clk.Step(10 * time.Second)
	if _, err := c.Version(t.Context(), &runtimeapi.VersionRequest{}); err != nil {
		t.Fatalf("Version after the downtime: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(modes) != 1 || modes[0] != RestartReboot {
		t.Fatalf("runtime told of restarts %v, want [reboot]", modes)
	}
	if n, d := total(inj, KindRestart), total(inj, KindDown); n != 1 || d != 1 {
		t.Fatalf("restart count %d, down count %d; want 1 and 1", n, d)
	}
	if err := inj.Restart("crash", 0); err == nil {
		t.Fatal("Restart with an unknown mode succeeded")
	}
}

func TestPlannedRestarts(t *testing.T) {
	var restarts atomic.Int32
	p := &Plan{Restart: Restart{Rate: 1, Mode: RestartWipe}} // every call, no downtime
	inj := newInjector(t, p, Options{Restart: func(m RestartMode) {
		if m == RestartWipe {
			restarts.Add(1)
		}
	}})
	f := &fakeRuntime{}
	c := serve(t, inj, f)
	for range 4 {
		if _, err := c.Version(t.Context(), &runtimeapi.VersionRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := restarts.Load(); n != 4 {
		t.Fatalf("%d wipes, want 4", n)
	}
	if got := inj.Counts(); len(got) != 1 || got[0] != (Count{Kind: KindRestart, Method: "wipe", N: 4}) {
		t.Fatalf("counts %+v", got)
	}
	// Without a way to lose state, only keep is possible.
	if _, err := New(p, 1, Options{}); err == nil || !strings.Contains(err.Error(), `restart mode "wipe"`) {
		t.Fatalf("New with mode wipe and no Restart: %v", err)
	}
	if _, err := New(&Plan{Restart: Restart{Rate: 0.1}}, 1, Options{}); err != nil {
		t.Fatalf("New with mode keep and no Restart: %v", err)
	}
}

func events(n int) []*runtimeapi.ContainerEventResponse {
	out := make([]*runtimeapi.ContainerEventResponse, n)
	for i := range out {
		out[i] = &runtimeapi.ContainerEventResponse{ContainerId: string(rune('a' + i))}
	}
	return out
}

// receive reads the stream to its end and returns the IDs received and
// the error that ended it (nil for a clean end).
func receive(t *testing.T, c runtimeapi.RuntimeServiceClient) (string, error) {
	t.Helper()
	s, err := c.GetContainerEvents(t.Context(), &runtimeapi.GetEventsRequest{})
	if err != nil {
		return "", err
	}
	var got strings.Builder
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return got.String(), nil
		}
		if err != nil {
			return got.String(), err
		}
		got.WriteString(ev.ContainerId)
	}
}

func TestEventFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *Plan
		want string
		code codes.Code
		kind Kind
		n    int64
		subs int32 // subscriptions that reached the runtime
	}{
		{"none", &Plan{}, "abcd", codes.OK, "", 0, 1},
		{"drop", &Plan{Events: EventFaults{Drop: 1}}, "", codes.OK, KindEventDrop, 4, 1},
		{"duplicate", &Plan{Events: EventFaults{Duplicate: 1}}, "aabbccdd", codes.OK, KindEventDuplicate, 4, 1},
		{"reorder", &Plan{Events: EventFaults{Reorder: 1}}, "badc", codes.OK, KindEventReorder, 2, 1},
		{"break", &Plan{Events: EventFaults{Break: 1}}, "", codes.Unavailable, KindStreamBreak, 1, 1},
		{"error when opened", anyMethod(RPCFaults{Error: 1, Codes: codesOf(codes.Internal)}), "", codes.Internal, KindError, 1, 0},
		{"error after subscribing", anyMethod(RPCFaults{ErrorAfter: 1, Codes: codesOf(codes.Internal)}), "", codes.Internal, KindErrorAfter, 1, 1},
		{"silent", anyMethod(RPCFaults{HangAfter: 1}), "", codes.OK, KindHangAfter, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inj := newInjector(t, tc.plan, Options{})
			f := &fakeRuntime{events: events(4)}
			got, err := receive(t, serve(t, inj, f))
			if got != tc.want || status.Code(err) != tc.code {
				t.Fatalf("received %q, %v; want %q, code %v", got, err, tc.want, tc.code)
			}
			if tc.kind != "" && total(inj, tc.kind) != tc.n {
				t.Fatalf("counts %+v, want %d of %s", inj.Counts(), tc.n, tc.kind)
			}
			if n := f.subscriptions.Load(); n != tc.subs {
				t.Fatalf("%d subscriptions reached the runtime, want %d", n, tc.subs)
			}
		})
	}
}

// TestReorderWindow: a reordered event with no successor is sent when its
// window passes on the clock.
func TestReorderWindow(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	inj := newInjector(t, &Plan{Events: EventFaults{Reorder: 1, ReorderWindow: Duration(time.Minute)}}, Options{Clock: clk})
	c := serve(t, inj, &fakeRuntime{events: events(1), hold: true})
	s, err := c.GetContainerEvents(t.Context(), &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the event to be held", clk.HasWaiters)
	clk.Step(time.Minute)
	ev, err := s.Recv()
	if err != nil || ev.ContainerId != "a" {
		t.Fatalf("Recv: %v, %v", ev, err)
	}
}

// TestSameSeedSameFaults: two runtimes with one seed, called in the same
// order, fail the same calls with the same codes; another seed differs.
func TestSameSeedSameFaults(t *testing.T) {
	p := anyMethod(RPCFaults{Error: 0.2, ErrorAfter: 0.2, Codes: codesOf(codes.Unavailable, codes.Internal, codes.Aborted, codes.Unknown)})
	run := func(seed uint64) []codes.Code {
		inj, err := New(p, seed, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := serve(t, inj, &fakeRuntime{})
		var out []codes.Code
		for i := range 200 {
			var err error
			if i%3 == 0 {
				_, err = c.RunPodSandbox(t.Context(), &runtimeapi.RunPodSandboxRequest{})
			} else {
				_, err = c.Version(t.Context(), &runtimeapi.VersionRequest{})
			}
			out = append(out, status.Code(err))
		}
		return out
	}
	a, b, other := run(5), run(5), run(6)
	failed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d: %v with one run, %v with the other", i, a[i], b[i])
		}
		if a[i] != codes.OK {
			failed++
		}
	}
	within(t, "failed calls", failed, len(a), 0.4)
	differ := 0
	for i := range a {
		if a[i] != other[i] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("seeds 5 and 6 gave the same faults")
	}
}

func TestCollector(t *testing.T) {
	inj := newInjector(t, anyMethod(RPCFaults{Error: 1, Codes: codesOf(codes.Unavailable)}), Options{})
	c := serve(t, inj, &fakeRuntime{})
	for range 2 {
		_, _ = c.Version(t.Context(), &runtimeapi.VersionRequest{})
	}
	_, _ = c.RunPodSandbox(t.Context(), &runtimeapi.RunPodSandboxRequest{})
	want := `# HELP actorlet_cri_faults_injected_total CRI faults injected, by kind and RPC method (for kind restart, the restart mode).
# TYPE actorlet_cri_faults_injected_total counter
actorlet_cri_faults_injected_total{kind="error",method="RunPodSandbox"} 1
actorlet_cri_faults_injected_total{kind="error",method="Version"} 2
`
	if err := testutil.CollectAndCompare(inj.Collector(), strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}
