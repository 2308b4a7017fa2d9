package sim

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/serve"
)

func TestServeRejectsUnsupportedEndpoints(t *testing.T) {
	rt := newRuntime(t, Options{})
	dir := t.TempDir()
	for _, ep := range []string{
		"tcp://0.0.0.0:0",
		"tcp://10.1.2.3:0",
		"tcp://example.com:0",
		"http://127.0.0.1:0",
		filepath.Join(dir, "cri.sock"),
		"unix://relative/cri.sock",
		"npipe:////./pipe/cri",
	} {
		err := Serve(context.Background(), ep, rt)
		if !errors.Is(err, ErrUnsupportedEndpoint) {
			t.Errorf("Serve(%q) = %v, want ErrUnsupportedEndpoint", ep, err)
		}
	}
	l, cleanup, err := serve.Listen("tcp://127.0.0.1:0")
	noErr(t, err, "listen on loopback tcp")
	if !l.Addr().(*net.TCPAddr).IP.IsLoopback() {
		t.Errorf("tcp listener on %v", l.Addr())
	}
	cleanup()
}

func TestServeSocketFile(t *testing.T) {
	rt := newRuntime(t, Options{})
	dir := filepath.Join(t.TempDir(), "new", "dir")
	sock := filepath.Join(dir, "cri.sock")

	// A stale socket (no server behind it) is replaced.
	noErr(t, os.MkdirAll(dir, 0o750), "mkdir")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	noErr(t, err, "stale listener")
	stale.SetUnlinkOnClose(false)
	noErr(t, stale.Close(), "close stale listener")

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, "unix://"+sock, rt) }()
	var conn *grpc.ClientConn
	waitFor(t, "a server on "+sock, func() bool {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	fi, err := os.Lstat(sock)
	noErr(t, err, "stat socket")
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode = %v, want socket 0660", fi.Mode())
	}
	conn, err = grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	noErr(t, err, "dial")
	defer conn.Close()
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	_, err = rc.Version(ctx, &runtimeapi.VersionRequest{})
	noErr(t, err, "Version")

	// A second server on the same live socket is refused.
	if err := Serve(context.Background(), "unix://"+sock, rt); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("second Serve on a live socket: %v, want ErrSocketInUse", err)
	}

	// An open event stream does not hold up shutdown.
	stream, err := rc.GetContainerEvents(context.Background(), &runtimeapi.GetEventsRequest{})
	noErr(t, err, "GetContainerEvents")
	_, err = stream.Header()
	noErr(t, err, "Header")
	cancel()
	noErr(t, <-errc, "Serve")
	if _, err := stream.Recv(); err == nil {
		t.Error("event stream still open after Serve returned")
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket not removed: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left in the socket directory: %v", entries)
	}

	// The runtime outlives its servers: serve it again.
	c := serveUnix(t, rt)
	_, err = c.Version(context.Background(), &runtimeapi.VersionRequest{})
	noErr(t, err, "Version on a second server")
}

func TestServeRefusesToClobberFiles(t *testing.T) {
	rt := newRuntime(t, Options{})
	path := filepath.Join(t.TempDir(), "cri.sock")
	noErr(t, os.WriteFile(path, []byte("data"), 0o600), "write file")
	if err := Serve(context.Background(), "unix://"+path, rt); err == nil {
		t.Fatal("Serve replaced a regular file")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
		t.Fatalf("file damaged: %q %v", b, err)
	}
}

func TestInProcess(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	conn, stop, err := InProcess(ctx, rt)
	noErr(t, err, "InProcess")
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	ic := runtimeapi.NewImageServiceClient(conn)
	_, err = ic.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	noErr(t, err, "PullImage")
	sb, err := rc.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0)})
	noErr(t, err, "RunPodSandbox")
	_, err = rc.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: "x"})
	wantCode(t, err, codes.Unimplemented, "Exec")
	stop()
	stop() // idempotent

	// The state survives the connection; a new one sees it.
	cctx, cancel := context.WithCancel(ctx)
	conn2, stop2, err := InProcess(cctx, rt)
	noErr(t, err, "InProcess again")
	defer stop2()
	st, err := runtimeapi.NewRuntimeServiceClient(conn2).PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	noErr(t, err, "PodSandboxStatus over a new connection")
	if st.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("state = %v", st.Status.State)
	}
	// Canceling the context stops it too.
	cancel()
	waitFor(t, "the in-process server to stop", func() bool {
		_, err := runtimeapi.NewRuntimeServiceClient(conn2).Version(ctx, &runtimeapi.VersionRequest{})
		return err != nil
	})
}
