package kubeletapi

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	authnv1 "k8s.io/api/authentication/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// echoStreamServer is a fake runtime streaming server: it accepts any
// upgrade and echoes each line back prefixed with "echo: ".
type echoStreamServer struct {
	srv *httptest.Server

	mu      sync.Mutex
	paths   []string
	authHdr []string
}

func newEchoStreamServer(t *testing.T) *echoStreamServer {
	t.Helper()
	e := &echoStreamServer{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.paths = append(e.paths, r.URL.RequestURI())
		e.authHdr = append(e.authHdr, r.Header.Get("Authorization"))
		e.mu.Unlock()
		if r.Header.Get("Upgrade") == "" {
			http.Error(w, "upgrade required", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + r.Header.Get("Upgrade") + "\r\n\r\n")
		_ = rw.Flush()
		for {
			line, err := rw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = rw.WriteString("echo: " + line)
			if rw.Flush() != nil {
				return
			}
		}
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *echoStreamServer) seen() (paths, auth []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.paths...), append([]string(nil), e.authHdr...)
}

// fakeRuntime resolves ns/pod/ctr (pod UID uid-1) and records the
// streaming requests, answering with URLs of its streaming server.
type fakeRuntime struct {
	base string

	mu   sync.Mutex
	reqs []proto.Message
}

func (f *fakeRuntime) ContainerID(_ context.Context, ns, pod, uid, ctr string) (string, error) {
	if ns != "ns" || pod != "pod" || ctr != "ctr" || (uid != "" && uid != "uid-1") {
		return "", fmt.Errorf("%w: container %s/%s/%s", ErrNotFound, ns, pod, ctr)
	}
	return "cid-1", nil
}

func (f *fakeRuntime) SandboxID(_ context.Context, ns, pod, uid string) (string, error) {
	if ns != "ns" || pod != "pod" || (uid != "" && uid != "uid-1") {
		return "", fmt.Errorf("%w: pod %s/%s", ErrNotFound, ns, pod)
	}
	return "sb-1", nil
}

func (f *fakeRuntime) record(m proto.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, m)
}

func (f *fakeRuntime) requests() []proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]proto.Message(nil), f.reqs...)
}

func (f *fakeRuntime) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	f.record(req)
	return &runtimeapi.ExecResponse{Url: f.base + "/exec/token-1"}, nil
}

func (f *fakeRuntime) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	f.record(req)
	return &runtimeapi.AttachResponse{Url: f.base + "/attach/token-2"}, nil
}

func (f *fakeRuntime) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	f.record(req)
	return &runtimeapi.PortForwardResponse{Url: f.base + "/portforward/token-3"}, nil
}

func startWithRuntime(t *testing.T) (*testEnv, *fakeRuntime, *echoStreamServer) {
	t.Helper()
	echo := newEchoStreamServer(t)
	rt := &fakeRuntime{base: echo.srv.URL}
	e := start(t, func(o *Options) {
		o.Containers = rt
		o.Streamer = rt
	})
	e.api.setUser("exec-token", &authnv1.UserInfo{Username: "alice"})
	return e, rt, echo
}

// upgrade sends an upgrade request for path over a new TLS connection
// with the bearer token and returns the connection and its reader, after
// checking the status.
func (e *testEnv) upgrade(path string, wantStatus int) (*tls.Conn, *bufio.Reader) {
	e.t.Helper()
	conn, err := tls.Dial("tcp", e.s.Addr(), e.tlsConfig())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer exec-token\r\n"+
		"Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nContent-Length: 0\r\n\r\n", path, e.s.Addr())
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		e.t.Fatalf("reading the upgrade response: %v", err)
	}
	if resp.StatusCode != wantStatus {
		body, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("POST %s = %d %q; want %d", path, resp.StatusCode, body, wantStatus)
	}
	return conn, br
}

// roundTrip writes a line to the stream and reads the echo.
func roundTrip(t *testing.T, conn io.Writer, br *bufio.Reader, line string) {
	t.Helper()
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := br.ReadString('\n')
	if err != nil || got != "echo: "+line+"\n" {
		t.Fatalf("echo %q, %v; want %q", got, err, "echo: "+line)
	}
}

func TestExecProxiesTheUpgradedStream(t *testing.T) {
	e, rt, echo := startWithRuntime(t)
	conn, br := e.upgrade("/exec/ns/pod/ctr?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1&tty=true", http.StatusSwitchingProtocols)
	roundTrip(t, conn, br, "ping")
	roundTrip(t, conn, br, "pong")

	want := &runtimeapi.ExecRequest{ContainerId: "cid-1", Cmd: []string{"sh", "-c", "echo hi"}, Stdin: true, Stdout: true, Tty: true}
	if reqs := rt.requests(); len(reqs) != 1 || !proto.Equal(reqs[0], want) {
		t.Errorf("runtime requests %v; want %v", reqs, want)
	}
	paths, auth := echo.seen()
	if !reflect.DeepEqual(paths, []string{"/exec/token-1"}) {
		t.Errorf("streaming server saw %q; want the runtime's URL", paths)
	}
	if auth[0] != "" {
		t.Errorf("the bearer token was proxied to the runtime: %q", auth[0])
	}
}

func TestAttachAndPortForward(t *testing.T) {
	e, rt, _ := startWithRuntime(t)
	conn, br := e.upgrade("/attach/ns/pod/uid-1/ctr?output=1", http.StatusSwitchingProtocols)
	roundTrip(t, conn, br, "attached")
	conn, br = e.upgrade("/portForward/ns/pod?port=8080", http.StatusSwitchingProtocols)
	roundTrip(t, conn, br, "forwarded")

	reqs := rt.requests()
	want := []proto.Message{
		&runtimeapi.AttachRequest{ContainerId: "cid-1", Stdout: true},
		&runtimeapi.PortForwardRequest{PodSandboxId: "sb-1", Port: []int32{8080}},
	}
	if len(reqs) != len(want) {
		t.Fatalf("runtime requests %v; want %v", reqs, want)
	}
	for i := range want {
		if !proto.Equal(reqs[i], want[i]) {
			t.Errorf("runtime request %d: %v; want %v", i, reqs[i], want[i])
		}
	}
}

func TestStreamingRequestErrors(t *testing.T) {
	e, rt, _ := startWithRuntime(t)
	e.upgrade("/exec/ns/pod/other?command=ls&output=1", http.StatusNotFound)
	e.upgrade("/exec/ns/pod/uid-2/ctr?command=ls&output=1", http.StatusNotFound)
	e.upgrade("/exec/ns/pod/ctr?output=1", http.StatusBadRequest)   // no command
	e.upgrade("/exec/ns/pod/ctr?command=ls", http.StatusBadRequest) // no stream
	e.upgrade("/portForward/ns/pod?port=0", http.StatusBadRequest)  // bad port
	e.upgrade("/portForward/ns/other", http.StatusNotFound)         // no such pod
	if reqs := rt.requests(); len(reqs) != 0 {
		t.Errorf("runtime requests %v; want none", reqs)
	}
	// Not an upgrade: the proxy refuses it.
	resp, _ := e.request(e.httpClient(e.client), http.MethodPost, "/exec/ns/pod/ctr?command=ls&output=1", "")
	if resp.StatusCode < 400 {
		t.Errorf("exec without upgrade = %d; want an error", resp.StatusCode)
	}
}

func TestShutdownClosesStreams(t *testing.T) {
	e, _, _ := startWithRuntime(t)
	conn, br := e.upgrade("/exec/ns/pod/ctr?command=sh&input=1&output=1", http.StatusSwitchingProtocols)
	roundTrip(t, conn, br, "before")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.s.Shutdown(ctx); err == nil {
		t.Error("Shutdown with no grace and an open stream returned nil")
	}
	if _, err := br.ReadString('\n'); err == nil {
		t.Error("the stream is still open after Shutdown")
	}
}
