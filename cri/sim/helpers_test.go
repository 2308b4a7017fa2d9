package sim

import (
	"context"
	"encoding/json"
	"errors"
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
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client talks to a Runtime over gRPC.
type client struct {
	runtimeapi.RuntimeServiceClient
	runtimeapi.ImageServiceClient
	conn *grpc.ClientConn
}

// newRuntime builds a Runtime with a test logger; the FakeClock is nil
// unless opts.Clock is one.
func newRuntime(t *testing.T, opts Options) *Runtime {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = zaptest.NewLogger(t)
	}
	rt, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func newFakeClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// serveUnix serves rt with Serve on a real unix socket under t.TempDir()
// and returns a client. Cleanup stops Serve and checks the socket is gone.
func serveUnix(t *testing.T, rt *Runtime) *client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "run", "cri.sock")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, "unix://"+sock, rt) }()
	waitFor(t, "socket "+sock+" to appear", func() bool {
		fi, err := os.Lstat(sock)
		return err == nil && fi.Mode().Type() == fs.ModeSocket
	})
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", sock, err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve returned %v", err)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("socket %s not removed after Serve: %v", sock, err)
		}
	})
	return &client{
		RuntimeServiceClient: runtimeapi.NewRuntimeServiceClient(conn),
		ImageServiceClient:   runtimeapi.NewImageServiceClient(conn),
		conn:                 conn,
	}
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a wait for an event
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, code codes.Code, what string) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("%s: got code %v (err %v), want %v", what, got, err, code)
	}
}

// noErr fails the test if err is not nil.
func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// podConfig is a kubelet-like sandbox config for pod name/uid.
func podConfig(name, uid string, attempt uint32) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: uid, Namespace: "default", Attempt: attempt},
		Hostname:     name,
		LogDirectory: "/var/log/pods/default_" + name + "_" + uid,
		Labels: map[string]string{
			LabelPodUID:                   uid,
			"io.kubernetes.pod.name":      name,
			"io.kubernetes.pod.namespace": "default",
			"app":                         name,
		},
		Annotations: map[string]string{"note": "sandbox of " + name},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER},
		}},
	}
}

func hostNetwork(cfg *runtimeapi.PodSandboxConfig) *runtimeapi.PodSandboxConfig {
	cfg.Linux.SecurityContext.NamespaceOptions.Network = runtimeapi.NamespaceMode_NODE
	return cfg
}

// containerConfig is a kubelet-like container config; env is k=v pairs.
func containerConfig(name, image string, env ...string) *runtimeapi.ContainerConfig {
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: name},
		Image:       &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: image},
		Labels:      map[string]string{"io.kubernetes.container.name": name},
		Annotations: map[string]string{"io.kubernetes.container.restartCount": "0"},
		LogPath:     name + "/0.log",
	}
	for i := 0; i+1 < len(env); i += 2 {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: env[i], Value: []byte(env[i+1])})
	}
	return cfg
}

func pull(t *testing.T, ctx context.Context, rt *Runtime, image string) string {
	t.Helper()
	resp, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	noErr(t, err, "PullImage "+image)
	return resp.ImageRef
}

// runPod runs a sandbox directly on rt.
func runPod(t *testing.T, ctx context.Context, rt *Runtime, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	resp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	noErr(t, err, "RunPodSandbox "+cfg.GetMetadata().GetName())
	return resp.PodSandboxId
}

// createContainer creates a container directly on rt.
func createContainer(t *testing.T, ctx context.Context, rt *Runtime, sbID string, sbCfg *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	resp, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: cfg, SandboxConfig: sbCfg})
	noErr(t, err, "CreateContainer "+cfg.GetMetadata().GetName())
	return resp.ContainerId
}

func startContainer(t *testing.T, ctx context.Context, rt *Runtime, id string) {
	t.Helper()
	_, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	noErr(t, err, "StartContainer "+id)
}

func containerStatus(t *testing.T, ctx context.Context, rt *Runtime, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	noErr(t, err, "ContainerStatus "+id)
	return resp.Status
}

func sandboxStatus(t *testing.T, ctx context.Context, rt *Runtime, id string) *runtimeapi.PodSandboxStatusResponse {
	t.Helper()
	resp, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	noErr(t, err, "PodSandboxStatus "+id)
	return resp
}

// simInfo reads Info from a verbose Status.
func simInfo(t *testing.T, ctx context.Context, status func(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error)) Info {
	t.Helper()
	resp, err := status(ctx, &runtimeapi.StatusRequest{Verbose: true})
	noErr(t, err, "Status")
	var in Info
	if err := json.Unmarshal([]byte(resp.Info[InfoKey]), &in); err != nil {
		t.Fatalf("Status info[%q] = %q: %v", InfoKey, resp.Info[InfoKey], err)
	}
	return in
}

// clientStatus adapts a gRPC client's Status to simInfo.
func clientStatus(c *client) func(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return func(ctx context.Context, r *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
		return c.Status(ctx, r)
	}
}

type fakeClockT = clocktesting.FakeClock

// tickerOnly is a clock.WithTicker without AfterFunc.
type tickerOnly struct{ c *clocktesting.FakeClock }

func (t tickerOnly) Now() time.Time                         { return t.c.Now() }
func (t tickerOnly) Since(ts time.Time) time.Duration       { return t.c.Since(ts) }
func (t tickerOnly) After(d time.Duration) <-chan time.Time { return t.c.After(d) }
func (t tickerOnly) NewTimer(d time.Duration) clock.Timer   { return t.c.NewTimer(d) }
func (t tickerOnly) Sleep(d time.Duration)                  { t.c.Sleep(d) }
func (t tickerOnly) Tick(d time.Duration) <-chan time.Time  { return t.c.Tick(d) }
func (t tickerOnly) NewTicker(d time.Duration) clock.Ticker { return t.c.NewTicker(d) }

var _ clock.WithTicker = tickerOnly{}
