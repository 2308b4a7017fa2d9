package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countingTransport answers every request with an open body and counts the
// requests it was given; it fails those of failPath.
type countingTransport struct {
	calls    atomic.Int32
	failPath string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.calls.Add(1)
	if r.URL.Path == c.failPath {
		return nil, errors.New("refused")
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
}

func tripThrough(ctx context.Context, t *testing.T, rt http.RoundTripper, url string) (*http.Response, error) {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt.RoundTrip(r)
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A request waits while the bound's requests are in flight: until the body
// of one is closed, not only until its response came.
func TestInflightLimitHoldsASlotUntilTheBodyIsClosed(t *testing.T) {
	next := &countingTransport{}
	rt := newInflightLimit(1, next)
	ctx := context.Background()

	a, err := tripThrough(ctx, t, rt, "https://api/api/v1/pods/a")
	if err != nil {
		t.Fatal(err)
	}
	// a's body is open: b waits, and gives up with its context.
	if _, err := tripThrough(canceled(), t, rt, "https://api/api/v1/pods/b"); !errors.Is(err, context.Canceled) {
		t.Fatalf("b with a in flight: err = %v, want it to wait and end with its context", err)
	}
	if n := next.calls.Load(); n != 1 {
		t.Fatalf("the transport got %d requests, want only a's", n)
	}
	// Closing a's body twice gives back one slot: c takes it and d waits.
	_ = a.Body.Close()
	_ = a.Body.Close()
	if _, err := tripThrough(ctx, t, rt, "https://api/api/v1/pods/c"); err != nil {
		t.Fatalf("c after a's body closed: %v", err)
	}
	if _, err := tripThrough(canceled(), t, rt, "https://api/api/v1/pods/d"); !errors.Is(err, context.Canceled) {
		t.Fatalf("d with c in flight: err = %v, want it to wait", err)
	}
}

// Watches are not counted, and a failed request gives its slot back.
func TestInflightLimitLeavesWatchesAndFailuresOut(t *testing.T) {
	next := &countingTransport{failPath: "/api/v1/pods/refused"}
	rt := newInflightLimit(1, next)
	ctx := context.Background()

	if _, err := tripThrough(ctx, t, rt, "https://api/api/v1/pods/refused"); err == nil {
		t.Fatal("the refused request succeeded")
	}
	held, err := tripThrough(ctx, t, rt, "https://api/api/v1/pods/a")
	if err != nil {
		t.Fatalf("a after a failed request: %v (the failure kept its slot)", err)
	}
	defer held.Body.Close()
	w, err := tripThrough(canceled(), t, rt, "https://api/api/v1/pods?watch=true")
	if err != nil {
		t.Fatalf("a watch with a in flight: %v, want it not counted", err)
	}
	_ = w.Body.Close()
}

func TestInflightLimitOfZeroIsNone(t *testing.T) {
	next := &countingTransport{}
	if rt := newInflightLimit(0, next); rt != http.RoundTripper(next) {
		t.Fatalf("newInflightLimit(0) = %T, want the transport itself", rt)
	}
}

// A node's heartbeats do not wait for the bound of the pods' requests: with
// its one slot held, a Lease is read (bounded too, the read would wait
// for the slot until its context ends).
func TestFleetHeartbeatsDoNotWaitForThePodsBound(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"x"}}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	clients, err := newFleetClients(writeKubeconfig(t, srv.URL), 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clients.forNode(twoNodeConfigs(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	// Hold the one slot: a pods' request whose body stays open.
	held, err := tripThrough(context.Background(), t, clients.pods, srv.URL+"/api/v1/namespaces/default/pods/held")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a heartbeat waiting would end here
	defer cancel()
	if _, err := c.heartbeat.CoordinationV1().Leases("kube-node-lease").Get(ctx, "fleet-0", metav1.GetOptions{}); err != nil {
		t.Fatalf("a heartbeat with the pods' slot held: %v", err)
	}
}
