package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/actorlet/actorlet/node/eventhub"
)

// twoNodeConfigs is the configuration of a fleet of two nodes (fleet-0,
// fleet-1) with the flags' defaults, rooted in a test directory.
func twoNodeConfigs(t *testing.T) []*nodeConfig {
	t.Helper()
	f := &fleetFlags{nodes: 2, namePrefix: "fleet-", rootDir: t.TempDir(), journal: journalDisk, maxPods: 110,
		statusUpdate: 10e9, eventedRelist: defaultFleetEventedRelist, leaseSeconds: 40, apiQPS: 50, apiBurst: 100, shutdownGrace: 10e9, log: logOptions{level: "info", format: "json"}}
	ncs, err := f.nodeConfigs(f.rootDir)
	if err != nil {
		t.Fatal(err)
	}
	return ncs
}

// writeKubeconfig writes an admin kubeconfig of the server at url.
func writeKubeconfig(t *testing.T, url string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, url)), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestFleetEventsWrittenAsTheirNode: through the fleet's one broadcaster,
// each node's events reach the API server by its event client, as
// system:node:<name>, with the kubelet's source (component kubelet, host
// the node) and their reasons.
func TestFleetEventsWrittenAsTheirNode(t *testing.T) {
	var mu sync.Mutex
	var seen []string // user, source, reason, object
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/events") {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		var e corev1.Event
		body, err := io.ReadAll(r.Body)
		if err == nil {
			_, _, err = scheme.Codecs.UniversalDeserializer().Decode(body, nil, &e)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s/%s %s %s %s/%s", r.Header.Get("Impersonate-User"), e.Source.Component, e.Source.Host,
			e.Reason, r.URL.Path, e.InvolvedObject.Namespace, e.InvolvedObject.Name))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(&e)
	}))
	defer srv.Close()
	clients, err := newFleetClients(writeKubeconfig(t, srv.URL), defaultFleetInflight)
	if err != nil {
		t.Fatal(err)
	}
	ncs := twoNodeConfigs(t)
	hub, err := eventhub.New(eventhub.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	for _, nc := range ncs {
		c, err := clients.forNode(nc)
		if err != nil {
			t.Fatal(err)
		}
		rec, remove, err := hub.Add(nc.nodeName, "kubelet", &typedcorev1.EventSinkImpl{Interface: c.events.CoreV1().Events("")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer remove()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + nc.nodeName, Namespace: "ns", UID: "u"}}
		rec.Event(pod, corev1.EventTypeNormal, "Pulled", "Container image already present on machine")
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events reached the API server, want 2", n)
		}
		<-tick.C
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{
		"system:node:fleet-0 kubelet/fleet-0 Pulled /api/v1/namespaces/ns/events ns/p-fleet-0": true,
		"system:node:fleet-1 kubelet/fleet-1 Pulled /api/v1/namespaces/ns/events ns/p-fleet-1": true,
	}
	for _, s := range seen {
		if !want[s] {
			t.Errorf("the API server got %q, want one of %v", s, want)
		}
		delete(want, s)
	}
}
