package sim

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const loopbackCIDR = "127.88.0.0/16"

// setupLoopback is setupFake with pod IPs in 127.88.0.0/16.
func setupLoopback(t *testing.T) (context.Context, *Runtime, *fakeClockT, string, *runtimeapi.PodSandboxConfig) {
	t.Helper()
	ctx := ctxT(t)
	clk := newFakeClock()
	rt := newRuntime(t, Options{Clock: clk, PodCIDR: loopbackCIDR})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	return ctx, rt, clk, runPod(t, ctx, rt, cfg), cfg
}

func podIP(t *testing.T, ctx context.Context, rt *Runtime, sb string) string {
	t.Helper()
	ip := sandboxStatus(t, ctx, rt, sb).GetStatus().GetNetwork().GetIp()
	if a := net.ParseIP(ip); a == nil || !a.IsLoopback() {
		t.Fatalf("pod IP %q is not a loopback address", ip)
	}
	return ip
}

// get does a GET without keep-alive and returns the status and body.
func get(ctx context.Context, url string) (int, string, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

func wantGet(t *testing.T, ctx context.Context, url string, code int, body string) {
	t.Helper()
	got, b, err := get(ctx, url)
	if err != nil || got != code || b != body {
		t.Fatalf("GET %s = %d %q, %v; want %d %q", url, got, b, err, code, body)
	}
}

func dial(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		_ = conn.Close()
	}
	return err
}

// waitClosed waits until nothing listens on addr.
func waitClosed(t *testing.T, addr string) {
	t.Helper()
	waitFor(t, addr+" to close", func() bool { return dial(addr) != nil })
}

func TestProbeServeHTTPAndTCP(t *testing.T) {
	ctx, rt, _, sb, cfg := setupLoopback(t)
	statusFile := filepath.Join(t.TempDir(), "status")
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("web", "busybox",
		EnvHTTPPort, "8080", EnvHTTPStatus, "503", EnvHTTPBody, "warming up",
		EnvHTTPStatusFile, statusFile, EnvTCPPort, "9000"))
	ip := podIP(t, ctx, rt, sb)
	url := "http://" + net.JoinHostPort(ip, "8080") + "/healthz"
	tcpAddr := net.JoinHostPort(ip, "9000")
	if _, _, err := get(ctx, url); err == nil {
		t.Fatal("a CREATED container serves HTTP")
	}

	startContainer(t, ctx, rt, id)
	wantGet(t, ctx, url, 503, "warming up")
	if err := dial(tcpAddr); err != nil {
		t.Fatalf("TCP port: %v", err)
	}

	// The status file wins over SIM_HTTP_STATUS; SetHTTPStatus over both.
	noErr(t, os.WriteFile(statusFile, []byte("500\n"), 0o600), "write status file")
	wantGet(t, ctx, url, 500, "warming up")
	noErr(t, rt.SetHTTPStatus(id, 200), "SetHTTPStatus")
	wantGet(t, ctx, url, 200, "warming up")
	noErr(t, rt.SetHTTPStatus(id, 0), "SetHTTPStatus 0")
	noErr(t, os.WriteFile(statusFile, []byte("not a status"), 0o600), "write status file")
	wantGet(t, ctx, url, 503, "warming up")
	wantCode(t, rt.SetHTTPStatus(id, 42), codes.InvalidArgument, "SetHTTPStatus 42")
	wantCode(t, rt.SetHTTPStatus("nope", 200), codes.NotFound, "SetHTTPStatus of an unknown container")

	_, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 10})
	noErr(t, err, "StopContainer")
	if _, _, err := get(ctx, url); err == nil {
		t.Fatal("HTTP still answered after StopContainer returned")
	}
	if err := dial(tcpAddr); err == nil {
		t.Fatal("TCP port open after StopContainer returned")
	}
	wantCode(t, rt.SetHTTPStatus(id, 200), codes.FailedPrecondition, "SetHTTPStatus of a stopped container")

	// The next attempt in the same sandbox gets the ports again.
	next := containerConfig("web", "busybox", EnvHTTPPort, "8080", EnvHTTPBody, "again")
	next.Metadata.Attempt = 1
	id2 := createContainer(t, ctx, rt, sb, cfg, next)
	startContainer(t, ctx, rt, id2)
	wantGet(t, ctx, url, 200, "again")
	_, err = rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id2})
	noErr(t, err, "RemoveContainer")
	if err := dial(net.JoinHostPort(ip, "8080")); err == nil {
		t.Fatal("HTTP port open after RemoveContainer of a running container returned")
	}
}

func TestProbeServeClosedOnScriptedExitAndSandboxStop(t *testing.T) {
	ctx, rt, clk, sb, cfg := setupLoopback(t)
	dies := createContainer(t, ctx, rt, sb, cfg, containerConfig("dies", "busybox", EnvTCPPort, "7001", EnvExitAfter, "10s"))
	lives := createContainer(t, ctx, rt, sb, cfg, containerConfig("lives", "busybox", EnvHTTPPort, "7002"))
	startContainer(t, ctx, rt, dies)
	startContainer(t, ctx, rt, lives)
	ip := podIP(t, ctx, rt, sb)
	diesAddr, livesURL := net.JoinHostPort(ip, "7001"), "http://"+net.JoinHostPort(ip, "7002")+"/"
	if err := dial(diesAddr); err != nil {
		t.Fatalf("TCP port: %v", err)
	}
	wantGet(t, ctx, livesURL, 200, "")

	clk.Step(10 * time.Second)
	waitState(t, ctx, rt, dies, runtimeapi.ContainerState_CONTAINER_EXITED)
	waitClosed(t, diesAddr)
	wantGet(t, ctx, livesURL, 200, "")

	_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "StopPodSandbox")
	if _, _, err := get(ctx, livesURL); err == nil {
		t.Fatal("HTTP still answered after StopPodSandbox returned")
	}
	if err := dial(net.JoinHostPort(ip, "7002")); err == nil {
		t.Fatal("HTTP port open after StopPodSandbox returned")
	}
}

func TestProbeServeClosedOnRuntimeClose(t *testing.T) {
	ctx, rt, _, sb, cfg := setupLoopback(t)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("web", "busybox", EnvTCPPort, "7003"))
	startContainer(t, ctx, rt, id)
	addr := net.JoinHostPort(podIP(t, ctx, rt, sb), "7003")
	if err := dial(addr); err != nil {
		t.Fatalf("TCP port: %v", err)
	}
	noErr(t, rt.Close(), "Close")
	waitClosed(t, addr)
}

// With a pod IP that is not loopback, the ports are ignored: nothing is
// opened (checked inside, as tests send no traffic off loopback).
func TestProbeServeIgnoredOffLoopback(t *testing.T) {
	ctx, rt, _, sb, cfg := setupFake(t) // DefaultPodCIDR
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("web", "busybox", EnvHTTPPort, "8080", EnvTCPPort, "9000"))
	startContainer(t, ctx, rt, id)
	if st := containerStatus(t, ctx, rt, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("state %v", st.State)
	}
	rt.mu.Lock()
	served := rt.containers[id].served()
	rt.mu.Unlock()
	if served != nil {
		t.Fatal("ports opened for a non-loopback pod IP")
	}
	wantCode(t, rt.SetHTTPStatus(id, 500), codes.FailedPrecondition, "SetHTTPStatus off loopback")
}

func TestProbeServeInvalidEnv(t *testing.T) {
	ctx, rt, _, sb, cfg := setupLoopback(t)
	for i, env := range [][]string{
		{EnvHTTPPort, "0"}, {EnvHTTPPort, "http"}, {EnvTCPPort, "70000"},
		{EnvHTTPStatus, "42"}, {EnvHTTPPort, "80", EnvTCPPort, "80"},
	} {
		c := containerConfig("bad"+strconv.Itoa(i), "busybox", env...)
		_, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: c, SandboxConfig: cfg})
		wantCode(t, err, codes.InvalidArgument, "CreateContainer with "+c.Envs[0].Key)
	}
}
