package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeLister returns the pods it holds.
type fakeLister struct {
	mu   sync.Mutex
	pods []*corev1.Pod
}

func (f *fakeLister) List() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods
}

// testOptions are the read-only port's options on a free loopback port.
func testOptions() Options {
	return Options{Port: 0, Pods: &fakeLister{}, Gatherer: prometheus.NewRegistry(), Summary: &fakeSummary{}}
}

// fakeSummary returns a summary naming the node, and counts the
// CPU-and-memory-only calls.
type fakeSummary struct {
	mu      sync.Mutex
	onlyCPU int
	err     error
}

func (f *fakeSummary) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("summary asked without a deadline")
	}
	if f.err != nil {
		return nil, f.err
	}
	if onlyCPUAndMemory {
		f.onlyCPU++
	}
	return &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: "node-1"}}, nil
}

// start starts a Server with opts and shuts it down when the test ends.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

var client = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   10 * time.Second,
}

// do sends a request to s and returns the response with its body read.
func do(t *testing.T, s *Server, method, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+s.Addr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, string(body)
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
