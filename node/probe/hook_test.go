package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestExecHook(t *testing.T) {
	fe := &fakeExec{resp: &runtimeapi.ExecSyncResponse{Stdout: []byte("saved")}}
	r := &Runner{Exec: fe}
	h := &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"save", "state"}}}
	out, err := r.Hook(context.Background(), target("10.0.0.1"), h)
	if err != nil || out != "saved" || fe.calls[0] != "cid-1 save state" || fe.timeouts[0] != 0 {
		t.Fatalf("hook = %q, %v; calls %q timeouts %v", out, err, fe.calls, fe.timeouts)
	}
	fe.resp = &runtimeapi.ExecSyncResponse{ExitCode: 2, Stderr: []byte("disk full")}
	out, err = r.Hook(context.Background(), target("10.0.0.1"), h)
	if err == nil || !strings.Contains(err.Error(), "exited with 2: disk full") || !strings.Contains(err.Error(), `"app"`) || out != "disk full" {
		t.Fatalf("failing hook = %q, %v", out, err)
	}
	fe.resp, fe.err = nil, errors.New("unavailable")
	if _, err := r.Hook(context.Background(), target("10.0.0.1"), h); !errors.Is(err, fe.err) {
		t.Fatalf("runtime error not wrapped: %v", err)
	}
}

func TestHTTPHook(t *testing.T) {
	var agent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agent = r.UserAgent()
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "bye")
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	r := &Runner{}
	h := &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/stop", Port: intstr.FromInt32(int32(port))}}
	if out, err := r.Hook(context.Background(), target(host), h); err != nil || out != "bye" || agent != HookUserAgent {
		t.Fatalf("hook = %q, %v (user agent %q)", out, err, agent)
	}
	h.HTTPGet.Path = "/bad"
	if _, err := r.Hook(context.Background(), target(host), h); err == nil || !strings.Contains(err.Error(), "status 500") {
		t.Fatalf("hook answered 500: %v", err)
	}
}

func TestSleepHook(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r := &Runner{Clock: clk}
	h := &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}
	done := make(chan error, 1)
	go func() { _, err := r.Hook(context.Background(), target(""), h); done <- err }()
	waitFor(t, "the sleep hook to wait", clk.HasWaiters)
	clk.Step(4 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("sleep hook ended after 4s of 5: %v", err)
	default:
	}
	clk.Step(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("sleep hook: %v", err)
	}

	// Cut short by ctx.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := r.Hook(ctx, target(""), h); done <- err }()
	waitFor(t, "the sleep hook to wait", clk.HasWaiters)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sleep hook: %v", err)
	}
}

func TestUnsupportedHooks(t *testing.T) {
	r := &Runner{}
	for _, h := range []*corev1.LifecycleHandler{nil, {}, {TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}} {
		if _, err := r.Hook(context.Background(), target(""), h); err == nil {
			t.Errorf("hook %+v succeeded", h)
		}
	}
}
