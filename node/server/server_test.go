package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestNewRejectsBadOptions(t *testing.T) {
	for name, mutate := range map[string]func(*Options){
		"negative port": func(o *Options) { o.Port = -1 },
		"port too big":  func(o *Options) { o.Port = 65536 },
	} {
		o := testOptions()
		mutate(&o)
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: New error %v; want ErrInvalidOptions", name, err)
		}
	}
}

func TestDefaultsToLoopback(t *testing.T) {
	s := start(t, testOptions()) // Address empty, port 0
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		t.Fatalf("Addr %q: %v", s.Addr(), err)
	}
	if host != DefaultAddress || port == "0" {
		t.Fatalf("Addr %q; want 127.0.0.1 and a real port", s.Addr())
	}
}

func TestAddrEmptyBeforeStart(t *testing.T) {
	s, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != "" {
		t.Fatalf("Addr before Start = %q; want empty", s.Addr())
	}
}

func TestBindConflictNamesTheAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port

	opts := testOptions()
	opts.Address = "127.0.0.1"
	opts.Port = port
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start(t.Context())
	if err == nil {
		_ = s.Shutdown(t.Context())
		t.Fatal("Start on a taken port succeeded")
	}
	if !errors.Is(err, ErrListen) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("error %v; want ErrListen and EADDRINUSE", err)
	}
	if want := "127.0.0.1:" + strconv.Itoa(port); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	// Shutdown after a failed Start is harmless.
	if err := s.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown after a failed Start: %v", err)
	}
}

func TestStartOnceAndNotAfterShutdown(t *testing.T) {
	s := start(t, testOptions())
	if err := s.Start(t.Context()); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second Start: %v; want ErrAlreadyStarted", err)
	}

	s2, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown before Start: %v", err)
	}
	if err := s2.Start(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Shutdown: %v; want ErrClosed", err)
	}
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

func TestStopsWhenStartContextEnds(t *testing.T) {
	s, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, s, http.MethodGet, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	cancel()
	waitFor(t, "the listener to close", func() bool { return refused(s.Addr()) })
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown after the context ended: %v", err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestShutdownLetsRequestsInFlightFinish(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	opts := testOptions()
	opts.Healthz = func(context.Context) error {
		close(entered)
		<-release
		return nil
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}

	type result struct {
		code int
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := client.Get("http://" + s.Addr() + "/healthz")
		if err != nil {
			got <- result{err: err}
			return
		}
		resp.Body.Close()
		got <- result{code: resp.StatusCode}
	}()
	<-entered

	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(t.Context()) }()
	waitFor(t, "the listener to close", func() bool { return refused(s.Addr()) })
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a request was in flight", err)
	default:
	}

	close(release)
	if r := <-got; r.err != nil || r.code != http.StatusOK {
		t.Fatalf("request in flight: %d, %v; want 200", r.code, r.err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownGraceRunsOut(t *testing.T) {
	entered := make(chan struct{})
	opts := testOptions()
	opts.Healthz = func(ctx context.Context) error {
		close(entered)
		<-ctx.Done() // until the connection is closed
		return ctx.Err()
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqErr := make(chan error, 1)
	go func() {
		resp, err := client.Get("http://" + s.Addr() + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		reqErr <- err
	}()
	<-entered

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with an expired context: %v; want context.Canceled", err)
	}
	if err := <-reqErr; err == nil {
		t.Fatal("the request in flight succeeded although its connection was closed")
	}
}
