package app

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

type podsFunc func() []*corev1.Pod

func (f podsFunc) List() []*corev1.Pod { return f() }

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHealthPortAndReadOnlyPort wires the local servers as a node does:
// the health port answers /healthz and 404s /pods and /metrics; the
// read-only port (--read-only-port) serves them, on loopback.
func TestHealthPortAndReadOnlyPort(t *testing.T) {
	port := freeLoopbackPort(t)
	nc, err := resolveArgs(t, kubeletconfig.RunProfile, "--healthz-port", "0", "--read-only-port", strconv.Itoa(port), "--hostname-override", "n1")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubelet_running_pods", Help: "Pods."}))
	pods := podsFunc(func() []*corev1.Pod {
		return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}}
	})
	ls, err := newLocalServers(nc, localProviders{Pods: pods, Gatherer: reg}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := ls.start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ls.shutdown(t.Context()) }()
	health, readOnly := ls.addrs()
	if want := "127.0.0.1:" + strconv.Itoa(port); readOnly != want {
		t.Fatalf("read-only port on %s; want %s", readOnly, want)
	}
	if code, body := get(t, health, "/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("health port /healthz: %d %q", code, body)
	}
	for _, path := range []string{"/pods", "/metrics"} {
		if code, _ := get(t, health, path); code != http.StatusNotFound {
			t.Errorf("health port %s: %d; want 404", path, code)
		}
	}
	if code, body := get(t, readOnly, "/pods"); code != http.StatusOK || !strings.Contains(body, `"name":"web"`) {
		t.Errorf("read-only /pods: %d %s", code, body)
	}
	if code, body := get(t, readOnly, "/metrics"); code != http.StatusOK || !strings.Contains(body, "kubelet_running_pods") {
		t.Errorf("read-only /metrics: %d %s", code, body)
	}
	if code, _ := get(t, readOnly, "/healthz"); code != http.StatusOK {
		t.Errorf("read-only /healthz: %d", code)
	}
}

// TestReadOnlyPortOffByDefault: with the kubelet's defaults (and under
// actorlet run) there is no read-only server.
func TestReadOnlyPortOffByDefault(t *testing.T) {
	for _, p := range []kubeletconfig.Profile{kubeletconfig.KubeletProfile, kubeletconfig.RunProfile} {
		nc, err := resolveArgs(t, p, "--hostname-override", "n1", "--node-ip", "127.0.0.1", "--fail-cgroupv1=false")
		if err != nil {
			t.Fatal(err)
		}
		if nc.kc.ReadOnlyPort != 0 {
			t.Errorf("profile %d: readOnlyPort %d by default; want 0 (off)", p, nc.kc.ReadOnlyPort)
		}
		ls, err := newLocalServers(nc, localProviders{}, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if ls.readOnly != nil {
			t.Errorf("profile %d: a read-only server by default", p)
		}
		if _, ro := ls.addrs(); ro != "off" {
			t.Errorf("profile %d: read-only address %q; want off", p, ro)
		}
	}
}

// TestReadOnlyAddress: --address, except an unspecified one that was not
// given on the command line, which becomes loopback.
func TestReadOnlyAddress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		p    kubeletconfig.Profile
		want string
	}{
		{nil, kubeletconfig.KubeletProfile, "127.0.0.1"},
		{nil, kubeletconfig.RunProfile, "127.0.0.1"},
		{[]string{"--address", "0.0.0.0"}, kubeletconfig.KubeletProfile, "0.0.0.0"},
		{[]string{"--address", "10.1.2.3"}, kubeletconfig.KubeletProfile, "10.1.2.3"},
	} {
		args := append([]string{"--hostname-override", "n1", "--node-ip", "127.0.0.1", "--fail-cgroupv1=false"}, tc.args...)
		nc, err := resolveArgs(t, tc.p, args...)
		if err != nil {
			t.Fatal(err)
		}
		if nc.readOnlyAddress != tc.want {
			t.Errorf("%v (profile %d): read-only address %q; want %q", tc.args, tc.p, nc.readOnlyAddress, tc.want)
		}
	}
	if got := readOnlyAddress("::", false); got != "127.0.0.1" {
		t.Errorf("a config file's :: gives %q; want 127.0.0.1", got)
	}
	if got := readOnlyAddress("10.1.2.3", false); got != "10.1.2.3" {
		t.Errorf("a config file's 10.1.2.3 gives %q", got)
	}
}
