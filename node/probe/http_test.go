package probe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hostPort splits a test server's URL into host and port.
func hostPort(t *testing.T, rawURL string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(rawURL, "http://"), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func httpGet(path string, port int) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(port))}}
}

func TestHTTPProbeStatusCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
		fmt.Fprintf(w, "answered %d", code)
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	var r Runner
	for _, tc := range []struct {
		code int
		want Result
		msg  string
	}{
		{200, Success, "answered 200"},
		{204, Success, ""},
		{399, Success, "Probe terminated redirects, Response body: answered 399"},
		{400, Failure, "HTTP probe failed with statuscode: 400"},
		{500, Failure, "HTTP probe failed with statuscode: 500"},
	} {
		res, msg := r.Probe(context.Background(), target(host), httpGet("/"+strconv.Itoa(tc.code), port), time.Second)
		if res != tc.want || msg != tc.msg {
			t.Errorf("status %d: got %v %q, want %v %q", tc.code, res, msg, tc.want, tc.msg)
		}
	}
}

func TestHTTPProbeHeadersAndNamedPort(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	h := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/healthz?full=1",
		Port: intstr.FromString("http"),
		HTTPHeaders: []corev1.HTTPHeader{
			{Name: "X-Probe", Value: "yes"},
			{Name: "Host", Value: "app.example"},
		},
	}}
	var r Runner
	tg := target(host, corev1.ContainerPort{Name: "http", ContainerPort: int32(port)})
	if res, msg := r.Probe(context.Background(), tg, h, time.Second); res != Success {
		t.Fatalf("probe = %v %q", res, msg)
	}
	req := <-got
	for k, want := range map[string]string{"User-Agent": "kube-probe/1.37", "Accept": "*/*", "X-Probe": "yes"} {
		if v := req.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if req.Host != "app.example" || req.URL.Path != "/healthz" || req.URL.RawQuery != "full=1" {
		t.Errorf("request host %q path %q query %q", req.Host, req.URL.Path, req.URL.RawQuery)
	}
	if !req.Close {
		t.Errorf("keep-alive not disabled")
	}

	// An unknown port name fails the probe without a request.
	h.HTTPGet.Port = intstr.FromString("metrics")
	if res, msg := r.Probe(context.Background(), tg, h, time.Second); res != Failure || !strings.Contains(msg, "metrics") {
		t.Fatalf("unknown named port: %v %q", res, msg)
	}
}

func TestHTTPProbeRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	_, otherPort := hostPort(t, other.URL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/fail", http.StatusFound)
		case "/fail":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/other":
			// Another host name: must not be followed.
			http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/", otherPort), http.StatusFound)
		}
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	var r Runner
	if res, msg := r.Probe(context.Background(), target(host), httpGet("/same", port), time.Second); res != Failure ||
		msg != "HTTP probe failed with statuscode: 503" {
		t.Errorf("same-host redirect not followed: %v %q", res, msg)
	}
	res, msg := r.Probe(context.Background(), target(host), httpGet("/other", port), time.Second)
	if res != Success || !strings.HasPrefix(msg, "Probe terminated redirects") {
		t.Errorf("redirect to another host: %v %q", res, msg)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("redirect to another host was followed (%d requests)", n)
	}
}

func TestHTTPProbeHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "tls ok") }))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	h := httpGet("/", port)
	var r Runner
	if res, msg := r.Probe(context.Background(), target(host), h, time.Second); res != Failure {
		t.Fatalf("plain HTTP to a TLS server: %v %q", res, msg)
	}
	h.HTTPGet.Scheme = corev1.URISchemeHTTPS
	if res, msg := r.Probe(context.Background(), target(host), h, time.Second); res != Success || msg != "tls ok" {
		t.Fatalf("HTTPS with a self-signed certificate: %v %q", res, msg)
	}
}

func TestHTTPProbeBodyCapAndTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, strings.Repeat("x", 3*maxBody))
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	var r Runner
	if res, msg := r.Probe(context.Background(), target(host), httpGet("/big", port), time.Second); res != Success || len(msg) != maxBody {
		t.Errorf("big body: %v, %d bytes of message", res, len(msg))
	}
	if res, msg := r.Probe(context.Background(), target(host), httpGet("/slow", port), 50*time.Millisecond); res != Failure ||
		!strings.Contains(msg, "deadline exceeded") {
		t.Errorf("slow server: %v %q", res, msg)
	}
}

func TestHTTPProbeNoPodIP(t *testing.T) {
	var r Runner
	tg := target("")
	if res, msg := r.Probe(context.Background(), tg, httpGet("/", 1), time.Second); res != Failure || !strings.Contains(msg, "no IP") {
		t.Fatalf("no pod IP: %v %q", res, msg)
	}
	// A hostNetwork pod without an IP is probed on 127.0.0.1.
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, port := hostPort(t, srv.URL)
	tg.Pod.Spec.HostNetwork = true
	if res, msg := r.Probe(context.Background(), tg, httpGet("/", port), time.Second); res != Success {
		t.Fatalf("hostNetwork pod without IP: %v %q", res, msg)
	}
}
