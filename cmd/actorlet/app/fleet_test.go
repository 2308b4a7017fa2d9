package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

func runFleetCommand(t *testing.T, args ...string) error {
	t.Helper()
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"fleet"}, args...))
	return root.ExecuteContext(context.Background())
}

// TestFleetBadFlags: each bad command line is refused before anything
// starts, with the flag at fault named; the nodes' kubelet flags are
// checked by the kubelet's own rules.
func TestFleetBadFlags(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "3"}, "--kubeconfig is required"},
		{[]string{"--kubeconfig", kc}, "--nodes 0"},
		{[]string{"--kubeconfig", kc, "--nodes", "20000"}, "--nodes 20000"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--journal", "tape"}, `--journal "tape"`},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--journal", "memory", "--root-dir", "/x"}, "--root-dir and --journal memory"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--root-dir", ""}, "--root-dir must not be empty"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--cpu", "lots"}, `--cpu "lots"`},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--memory", "-1Gi"}, `--memory "-1Gi"`},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--max-pods", "0"}, "--max-pods 0"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--name-prefix", "Bad_"}, "not valid"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--root-dir", t.TempDir(), "--node-labels", "bad label=1"}, "invalid node labels"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--root-dir", t.TempDir(), "--register-with-taints", "a=b:Sometimes"}, "--register-with-taints"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--root-dir", t.TempDir(), "--evented-relist-period", "0s"}, "--evented-relist-period 0s"},
		{[]string{"--kubeconfig", kc, "--nodes", "2", "--root-dir", t.TempDir()}, "--kubeconfig " + kc},
	} {
		err := runFleetCommand(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fleet %v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

// TestFleetNodesRelistAtTheFleetPeriod: a fleet's nodes list their
// runtimes in full beside the events every 300s unless told otherwise,
// where actorlet run's node does it every 30s.
func TestFleetNodesRelistAtTheFleetPeriod(t *testing.T) {
	if got := newFleetCommand().Flags().Lookup("evented-relist-period").DefValue; got != "5m0s" {
		t.Errorf("fleet --evented-relist-period defaults to %s, want 5m0s", got)
	}
	for _, nc := range twoNodeConfigs(t) {
		if got := nc.own.eventedRelistPeriod; got != 5*time.Minute {
			t.Errorf("node %s lists every %s beside its events, want 5m0s", nc.nodeName, got)
		}
	}
	nc, err := resolveArgs(t, kubeletconfig.RunProfile)
	if err != nil {
		t.Fatal(err)
	}
	if got := nc.own.eventedRelistPeriod; got != 30*time.Second {
		t.Errorf("actorlet run lists every %s beside the events, want 30s", got)
	}
}

// TestFleetNodeNamesAndPodCIDRs: names are zero-padded to the widest
// number; no two nodes share a pod CIDR.
func TestFleetNodeNamesAndPodCIDRs(t *testing.T) {
	f := &fleetFlags{nodes: 50, namePrefix: "fleet-"}
	if a, b := f.nodeName(0), f.nodeName(49); a != "fleet-00" || b != "fleet-49" {
		t.Fatalf("names %s..%s, want fleet-00..fleet-49", a, b)
	}
	seen := map[string]int{}
	for i := range maxFleetNodes {
		c := podCIDR(i)
		if j, dup := seen[c]; dup {
			t.Fatalf("nodes %d and %d share %s", j, i, c)
		}
		seen[c] = i
	}
	if last := podCIDR(maxFleetNodes - 1); last != "10.127.255.0/24" {
		t.Fatalf("the last node's CIDR %s, want 10.127.255.0/24 (inside 10.64.0.0/10)", last)
	}
}

// TestFleetClientsImpersonateOverOneTransport: each node's requests carry
// its identity (system:node:<name> in system:nodes) through the one
// transport of the kubeconfig's identity; the shared informers' client
// impersonates no one. A node's clients hold the API groups it uses
// (core, coordination, authentication), their groups under one rate
// limit; a request to another group fails without reaching the server.
func TestFleetClientsImpersonateOverOneTransport(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // path -> user, groups, credentials
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Impersonate-User") + " " + strings.Join(r.Header.Values("Impersonate-Group"), ",") +
			" " + r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"x"}}`)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	defer srv.Close()
	clients, err := newFleetClients(writeKubeconfig(t, srv.URL), defaultFleetInflight)
	if err != nil {
		t.Fatal(err)
	}
	ncs := twoNodeConfigs(t)
	ctx := context.Background()
	for _, nc := range ncs {
		c, err := clients.forNode(nc)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.kube.CoreV1().Nodes().Get(ctx, nc.nodeName, metav1.GetOptions{})
		_, _ = c.events.CoreV1().Nodes().Get(ctx, nc.nodeName+"-events", metav1.GetOptions{})
		_, _ = c.heartbeat.CoreV1().Nodes().Get(ctx, nc.nodeName+"-heartbeat", metav1.GetOptions{})
		_, _ = c.kube.CoordinationV1().Leases("kube-node-lease").Get(ctx, nc.nodeName, metav1.GetOptions{})
		_, _ = c.heartbeat.CoordinationV1().Leases("kube-node-lease").Get(ctx, nc.nodeName+"-heartbeat", metav1.GetOptions{})
		_, _ = c.kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		// The groups of one client share its rate limit, as a
		// Clientset's do.
		if c.kube.CoreV1().RESTClient().GetRateLimiter() != c.kube.CoordinationV1().RESTClient().GetRateLimiter() {
			t.Errorf("node %s: its core and coordination clients have rate limits of their own, want one", nc.nodeName)
		}
		// The groups a node does not use fail without a request.
		if _, err := c.kube.AppsV1().Deployments("default").Get(ctx, "d", metav1.GetOptions{}); !errors.Is(err, errGroupNotServed) {
			t.Errorf("node %s: a Deployment read: %v, want %v", nc.nodeName, err, errGroupNotServed)
		}
		if _, err := c.events.CoordinationV1().Leases("kube-node-lease").Get(ctx, nc.nodeName+"-events", metav1.GetOptions{}); !errors.Is(err, errGroupNotServed) {
			t.Errorf("node %s: a Lease read by the event client: %v, want %v", nc.nodeName, err, errGroupNotServed)
		}
		// A node's pod status writes wait for its rate limit; its
		// heartbeats never do.
		if c.kube.CoreV1().RESTClient().GetRateLimiter() == nil {
			t.Errorf("node %s: its API client has no rate limit, want --kube-api-qps's", nc.nodeName)
		}
		if rl := c.heartbeat.CoordinationV1().RESTClient().GetRateLimiter(); rl != nil {
			t.Errorf("node %s: its heartbeat client has a rate limit (%v), want none", nc.nodeName, rl.QPS())
		}
	}
	_, _ = clients.shared.CoreV1().Nodes().Get(ctx, "shared", metav1.GetOptions{})
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]string{
		"/api/v1/nodes/fleet-0":           "system:node:fleet-0 system:nodes,system:authenticated Bearer admin-token",
		"/api/v1/nodes/fleet-1-events":    "system:node:fleet-1 system:nodes,system:authenticated Bearer admin-token",
		"/api/v1/nodes/fleet-1-heartbeat": "system:node:fleet-1 system:nodes,system:authenticated Bearer admin-token",
		"/api/v1/nodes/shared":            "  Bearer admin-token",
		"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-0":           "system:node:fleet-0 system:nodes,system:authenticated Bearer admin-token",
		"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-1-heartbeat": "system:node:fleet-1 system:nodes,system:authenticated Bearer admin-token",
		"/apis/authentication.k8s.io/v1/selfsubjectreviews":                                "system:node:fleet-1 system:nodes,system:authenticated Bearer admin-token",
	} {
		if got := seen[path]; got != want {
			t.Errorf("GET %s as %q, want %q", path, got, want)
		}
	}
	for path := range seen {
		if strings.Contains(path, "deployments") || strings.HasSuffix(path, "-events") && strings.Contains(path, "leases") {
			t.Errorf("GET %s reached the API server", path)
		}
	}
	if conns != 1 {
		t.Errorf("%d connections to the API server, want 1 (HTTP/2, one pool)", conns)
	}
}

// TestFirstDone: the fleet's one wait for its nodes answers the node that
// ended, or -1 once the fleet stops, whichever closed.
func TestFirstDone(t *testing.T) {
	stop := make(chan struct{})
	dones := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	recv := func() []<-chan struct{} {
		out := make([]<-chan struct{}, len(dones))
		for i, d := range dones {
			out[i] = d
		}
		return out
	}
	close(dones[1])
	if i := firstDone(stop, recv()); i != 1 {
		t.Fatalf("node 1 ended: firstDone %d, want 1", i)
	}
	dones = slices.Delete(dones, 1, 2)
	close(stop)
	if i := firstDone(stop, recv()); i != -1 {
		t.Fatalf("the fleet stopped: firstDone %d, want -1", i)
	}
	var never <-chan struct{} // context.Background's Done
	close(dones[0])
	if i := firstDone(never, recv()); i != 0 {
		t.Fatalf("node 0 ended, no stop: firstDone %d, want 0", i)
	}
}

// TestFleetStatusWriterWorkers: a fleet node's status writer has one
// worker (the kubelet's status manager is one goroutine); actorlet run's
// node keeps statuswriter's default.
func TestFleetStatusWriterWorkers(t *testing.T) {
	if w := statusWriterOptions(nil, nil, "n", true, zap.NewNop()).Workers; w != 1 {
		t.Errorf("a fleet node's writer has %d workers, want 1", w)
	}
	if w := statusWriterOptions(nil, nil, "n", false, zap.NewNop()).Workers; w != 0 {
		t.Errorf("actorlet run's writer has %d workers, want statuswriter's default (0)", w)
	}
}
