package kubeletapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func parseQuery(q string) (url.Values, error) { return url.ParseQuery(q) }

// fakeLogs locates the logs of container ns/pod/ctr in dir: current.log
// and previous.log. It reports the container running until stopped.
type fakeLogs struct {
	dir     string
	stopped atomic.Bool
}

func (f *fakeLogs) ContainerLogPath(_ context.Context, ns, pod, ctr string, previous bool) (string, error) {
	if ns != "ns" || pod != "pod" || ctr != "ctr" {
		return "", fmt.Errorf("%w: container %s/%s/%s", ErrNotFound, ns, pod, ctr)
	}
	if previous {
		return filepath.Join(f.dir, "previous.log"), nil
	}
	return filepath.Join(f.dir, "current.log"), nil
}

func (f *fakeLogs) ContainerRunning(context.Context, string, string, string) (bool, error) {
	return !f.stopped.Load(), nil
}

func startWithLogs(t *testing.T) (*testEnv, *fakeLogs) {
	t.Helper()
	logs := &fakeLogs{dir: t.TempDir()}
	writeFile(t, logs.dir, "current.log", []byte(sampleLog))
	writeFile(t, logs.dir, "previous.log", []byte("2026-01-01T00:00:00Z stdout F before the restart\n"))
	return start(t, func(o *Options) {
		o.Logs = logs
		o.LogPollInterval = 2 * time.Millisecond
	}), logs
}

func TestContainerLogs(t *testing.T) {
	e, _ := startWithLogs(t)
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"", "one\ntwo\nthree\nfour\n\n"},
		{"?tailLines=2", "four\n\n"},
		{"?sinceTime=2026-01-02T03:04:03Z", "three\nfour\n\n"},
		{"?sinceTime=2026-01-02T03:04:03Z&tailLines=1&timestamps=true", "2026-01-02T03:04:05Z \n"},
		{"?limitBytes=3", "one"},
		{"?previous=true", "before the restart\n"},
	} {
		resp, body := e.get("/containerLogs/ns/pod/ctr" + tc.query)
		if resp.StatusCode != http.StatusOK || body != tc.want {
			t.Errorf("GET /containerLogs/ns/pod/ctr%s = %d %q; want 200 %q", tc.query, resp.StatusCode, body, tc.want)
		}
	}
	if resp, body := e.get("/containerLogs/ns/pod/other"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown container: %d %q; want 404", resp.StatusCode, body)
	}
	if resp, _ := e.get("/containerLogs/ns/pod/ctr?tailLines=-3"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad tailLines: %d; want 400", resp.StatusCode)
	}
}

func TestContainerLogsMissingFileIs404(t *testing.T) {
	e, logs := startWithLogs(t)
	if err := os.Remove(filepath.Join(logs.dir, "previous.log")); err != nil {
		t.Fatal(err)
	}
	if resp, body := e.get("/containerLogs/ns/pod/ctr?previous=true"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing previous log: %d %q; want 404", resp.StatusCode, body)
	}
}

// appendLog appends CRI records to the log file.
func appendLog(t *testing.T, path, records string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(records); err != nil {
		t.Fatal(err)
	}
}

// readLine reads one line from r, failing the test on error.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the followed log: %q, %v", line, err)
	}
	return line
}

func TestContainerLogsFollow(t *testing.T) {
	e, logs := startWithLogs(t)
	path := filepath.Join(logs.dir, "current.log")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		"https://"+e.s.Addr()+"/containerLogs/ns/pod/ctr?follow=true&tailLines=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.httpClient(e.client).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	if got := readLine(t, r); got != "\n" {
		t.Fatalf("first line %q; want the last (empty) line", got)
	}
	// Appended while the client reads: a partial record waits for its end.
	appendLog(t, path, "2026-01-02T03:05:00Z stdout F five\n2026-01-02T03:05:01Z stdout P si")
	if got := readLine(t, r); got != "five\n" {
		t.Fatalf("got %q; want five", got)
	}
	appendLog(t, path, "x\n2026-01-02T03:05:01Z stdout F !\n")
	if got := readLine(t, r); got != "six!\n" {
		t.Fatalf("got %q; want six!", got)
	}

	// The runtime rotates the file: the new one is read from its start.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, logs.dir, "current.log", []byte("2026-01-02T03:06:00Z stderr F after rotation\n"))
	if got := readLine(t, r); got != "after rotation\n" {
		t.Fatalf("got %q; want the rotated file's line", got)
	}

	// The container stops: the rest is read, then the response ends.
	appendLog(t, path, "2026-01-02T03:07:00Z stdout F last words\n")
	logs.stopped.Store(true)
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading to the end: %v", err)
	}
	if string(rest) != "last words\n" {
		t.Errorf("rest %q; want the last words", rest)
	}
}

func TestContainerLogsFollowEndsWhenTheClientGoes(t *testing.T) {
	e, _ := startWithLogs(t)
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"https://"+e.s.Addr()+"/containerLogs/ns/pod/ctr?follow=true&tailLines=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.httpClient(e.client).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_ = resp.Body.Close()
	eventually(t, "the follow handler to end", func() bool {
		e.s.handlers.mu.Lock()
		defer e.s.handlers.mu.Unlock()
		return e.s.handlers.n == 0
	})
}

func TestContainerLogsFollowedLogEndsOnShutdown(t *testing.T) {
	e, _ := startWithLogs(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		"https://"+e.s.Addr()+"/containerLogs/ns/pod/ctr?follow=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.httpClient(e.client).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if got := readLine(t, r); got != "one\n" {
		t.Fatalf("first line %q", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// No grace: the follow is cut and Shutdown returns.
	if err := e.s.Shutdown(ctx); err == nil {
		t.Error("Shutdown with an expired context and a followed log returned nil")
	}
	// The response ends (cleanly or cut).
	_, _ = io.ReadAll(r)
}
