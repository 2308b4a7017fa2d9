package proxy

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/cri/serve"
	"github.com/actorlet/actorlet/cri/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type client struct {
	runtimeapi.RuntimeServiceClient
	runtimeapi.ImageServiceClient
	conn *grpc.ClientConn
}

// startProxy serves a proxy to up on a unix socket under t.TempDir(), with
// plan's faults (nil: none), and returns a client of it.
func startProxy(t *testing.T, up Upstream, plan *faults.Plan) (*client, *faults.Injector) {
	t.Helper()
	var inj *faults.Injector
	if plan != nil {
		var err error
		if inj, err = faults.New(plan, 1, faults.Options{Logger: zaptest.NewLogger(t)}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- NewServer(New(up, zaptest.NewLogger(t)), inj).Run(ctx, "unix://"+sock) }()
	waitFor(t, "the proxy socket", func() bool {
		fi, err := os.Lstat(sock)
		return err == nil && fi.Mode().Type() == fs.ModeSocket
	})
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("proxy Run: %v", err)
		}
	})
	return &client{runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn), conn}, inj
}

// simUpstream is a simulated runtime reached in process.
func simUpstream(t *testing.T, opts sim.Options) (*sim.Runtime, Upstream) {
	t.Helper()
	opts.Logger = zaptest.NewLogger(t)
	rt, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); _ = rt.Close() })
	return rt, Upstream{Runtime: conn, Image: conn}
}

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

func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantCode(t *testing.T, err error, want codes.Code, what string) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("%s: %v (code %v), want %v", what, err, got, want)
	}
}

func podConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
		Labels:   map[string]string{sim.LabelPodUID: name + "-uid"},
	}
}

// TestForwardsAPodsLife: a pod's calls, both services and the event
// stream go through; upstream errors arrive with their code and message.
func TestForwardsAPodsLife(t *testing.T) {
	ctx := t.Context()
	rt, up := simUpstream(t, sim.Options{})
	c, _ := startProxy(t, up, nil)

	v, err := c.Version(ctx, &runtimeapi.VersionRequest{})
	noErr(t, err, "Version")
	if v.RuntimeName != sim.DefaultRuntimeName {
		t.Fatalf("Version: %v", v)
	}
	events, err := c.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	noErr(t, err, "GetContainerEvents")
	_, err = events.Header() // before any event: the subscription is in place
	noErr(t, err, "events header")

	_, err = c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	noErr(t, err, "PullImage")
	cfg := podConfig("p")
	sb, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	noErr(t, err, "RunPodSandbox")
	ctr, err := c.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, SandboxConfig: cfg, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
	}})
	noErr(t, err, "CreateContainer")
	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId})
	noErr(t, err, "StartContainer")
	list, err := c.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	noErr(t, err, "ListContainers")
	if len(list.Containers) != 1 || list.Containers[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ListContainers: %v", list.Containers)
	}
	for _, want := range []string{sb.PodSandboxId, sb.PodSandboxId, ctr.ContainerId, ctr.ContainerId} {
		ev, err := events.Recv()
		noErr(t, err, "event")
		if ev.ContainerId != want {
			t.Fatalf("event %v, want one of %s", ev, want)
		}
	}

	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId})
	_, direct := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctr.ContainerId})
	wantCode(t, err, codes.FailedPrecondition, "second StartContainer through the proxy")
	if status.Convert(err).Message() != status.Convert(direct).Message() {
		t.Fatalf("message through the proxy %q, upstream's %q", status.Convert(err).Message(), status.Convert(direct).Message())
	}
	_, err = c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
	wantCode(t, err, codes.NotFound, "ContainerStatus of an unknown container")
}

// streamingUpstream answers the streaming RPCs with a URL of its own and
// sends metadata both ways.
type streamingUpstream struct {
	runtimeapi.UnimplementedRuntimeServiceServer
}

func (streamingUpstream) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	_ = grpc.SetHeader(ctx, metadata.MD{"x-seen": md.Get("x-caller")})
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t"))
	return &runtimeapi.ExecResponse{Url: "http://127.0.0.1:1234/exec/" + req.ContainerId}, nil
}

func (streamingUpstream) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return &runtimeapi.PortForwardResponse{Url: "http://127.0.0.1:1234/portforward/" + req.PodSandboxId}, nil
}

// TestStreamingURLsAndMetadata: Exec and PortForward answer the upstream's
// URL; metadata passes both ways; other services are refused.
func TestStreamingURLsAndMetadata(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, streamingUpstream{})
	sock := filepath.Join(dir, "up.sock")
	up, cleanup, err := serve.Listen("unix://" + sock)
	noErr(t, err, "listen")
	go func() { _ = srv.Serve(up) }()
	defer func() { srv.Stop(); cleanup() }()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	noErr(t, err, "dial upstream")
	defer conn.Close()
	c, _ := startProxy(t, Upstream{Runtime: conn, Image: conn}, nil)

	var header, trailer metadata.MD
	ex, err := c.Exec(metadata.AppendToOutgoingContext(ctx, "x-caller", "me"), &runtimeapi.ExecRequest{ContainerId: "c1"},
		grpc.Header(&header), grpc.Trailer(&trailer))
	noErr(t, err, "Exec")
	if ex.Url != "http://127.0.0.1:1234/exec/c1" {
		t.Fatalf("Exec URL %q", ex.Url)
	}
	if got := header.Get("x-seen"); len(got) != 1 || got[0] != "me" {
		t.Fatalf("header %v: the caller's metadata did not reach the upstream, or its header did not come back", header)
	}
	if got := trailer.Get("x-trailer"); len(got) != 1 || got[0] != "t" {
		t.Fatalf("trailer %v", trailer)
	}
	pf, err := c.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: "s1"})
	noErr(t, err, "PortForward")
	if pf.Url != "http://127.0.0.1:1234/portforward/s1" {
		t.Fatalf("PortForward URL %q", pf.Url)
	}
	_, err = c.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: "c1"})
	wantCode(t, err, codes.Unimplemented, "Attach, which the upstream does not serve")

	err = c.conn.Invoke(ctx, "/containerd.services.version.v1.Version/Version", &runtimeapi.VersionRequest{}, &runtimeapi.VersionResponse{})
	wantCode(t, err, codes.Unimplemented, "a containerd API call through the proxy")
}

// TestCancelReachesTheUpstream: a call the caller gives up on is given up
// upstream too, so it has no effect there.
func TestCancelReachesTheUpstream(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	rt, up := simUpstream(t, sim.Options{Clock: clk, Latency: map[string]time.Duration{"RunPodSandbox": time.Hour}})
	c, _ := startProxy(t, up, nil)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p")})
		errc <- err
	}()
	waitFor(t, "the upstream call", clk.HasWaiters)
	cancel()
	wantCode(t, <-errc, codes.Canceled, "canceled RunPodSandbox")
	waitFor(t, "the upstream to give up", func() bool { return !clk.HasWaiters() })
	clk.Step(2 * time.Hour)
	if in := rt.Info(); in.Sandboxes != 0 {
		t.Fatalf("a canceled call had an effect upstream: %+v", in)
	}
}

// TestFaultsInTheProxy: the plan's faults apply to forwarded calls, with
// the effect (or none) upstream that each kind promises.
func TestFaultsInTheProxy(t *testing.T) {
	ctx := t.Context()
	p, err := faults.Parse([]byte(`
rpcs:
  RunPodSandbox: {errorAfter: 1, codes: [DeadlineExceeded]}
  StopPodSandbox: {error: 1, codes: [Unavailable]}
events: {duplicate: 1}
`))
	noErr(t, err, "plan")
	rt, up := simUpstream(t, sim.Options{})
	c, inj := startProxy(t, up, p)

	events, err := c.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	noErr(t, err, "GetContainerEvents")
	_, err = events.Header()
	noErr(t, err, "events header")
	_, err = c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p")})
	wantCode(t, err, codes.DeadlineExceeded, "RunPodSandbox")
	if in := rt.Info(); in.Sandboxes != 1 {
		t.Fatalf("error-after RunPodSandbox: %d sandboxes upstream, want 1", in.Sandboxes)
	}
	list, err := c.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	noErr(t, err, "ListPodSandbox")
	_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: list.Items[0].Id})
	wantCode(t, err, codes.Unavailable, "StopPodSandbox")
	if in := rt.Info(); in.ReadySandboxes != 1 {
		t.Fatal("a call failed before it reached the upstream stopped the sandbox")
	}
	var got []runtimeapi.ContainerEventType
	for range 4 {
		ev, err := events.Recv()
		noErr(t, err, "event")
		got = append(got, ev.ContainerEventType)
	}
	created, started := runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT
	if got[0] != created || got[1] != created || got[2] != started || got[3] != started {
		t.Fatalf("events %v, want each twice", got)
	}

	// A restart (an outage in front of a real runtime) cuts the stream.
	noErr(t, inj.Restart(faults.RestartKeep, 0), "Restart")
	_, err = events.Recv()
	wantCode(t, err, codes.Unavailable, "event stream across a restart")
	if in := rt.Info(); in.ReadySandboxes != 1 {
		t.Fatal("a proxy restart changed the upstream")
	}
	tot := inj.Totals()
	if tot[faults.KindErrorAfter] != 1 || tot[faults.KindError] != 1 || tot[faults.KindEventDuplicate] != 2 || tot[faults.KindRestart] != 1 {
		t.Fatalf("counts %v", tot)
	}
	if err := inj.Restart(faults.RestartWipe, 0); err == nil {
		t.Fatal("a proxy's injector wiped a real runtime's state")
	}
}
