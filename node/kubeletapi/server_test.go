package kubeletapi

import (
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func validOptions() Options {
	return Options{
		Address:  "127.0.0.1",
		NodeName: testNode,
		Client:   fake.NewClientset(),
		Pods:     PodListerFunc(func() []*corev1.Pod { return nil }),
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, mutate := range map[string]func(*Options){
		"no node name":     func(o *Options) { o.NodeName = "" },
		"no client":        func(o *Options) { o.Client = nil },
		"no pods":          func(o *Options) { o.Pods = nil },
		"negative port":    func(o *Options) { o.Port = -1 },
		"port too big":     func(o *Options) { o.Port = 65536 },
		"cert without key": func(o *Options) { o.TLSCertFile = "x.crt" },
		"missing cert":     func(o *Options) { o.TLSCertFile, o.TLSKeyFile = "/nonexistent.crt", "/nonexistent.key" },
		"missing CA":       func(o *Options) { o.ClientCAFile = "/nonexistent-ca.crt" },
		"negative TTL":     func(o *Options) { o.TokenCacheTTL = -time.Second },
	} {
		o := validOptions()
		mutate(&o)
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: New error %v; want ErrInvalidOptions", name, err)
		}
	}
}

func TestSelfSignedServingCertificate(t *testing.T) {
	o := validOptions()
	o.NodeIPs = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.7")}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
	conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // inspecting the certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	leaf := conn.ConnectionState().PeerCertificates[0]
	if err := leaf.VerifyHostname(testNode); err != nil {
		t.Errorf("serving certificate is not for the node name: %v", err)
	}
	if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.ParseIP("10.0.0.7")) }) {
		t.Errorf("serving certificate IPs %v lack the node IP", leaf.IPAddresses)
	}
}

func TestLifecycle(t *testing.T) {
	s, err := New(validOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() != "" {
		t.Errorf("Addr before Start = %q", s.Addr())
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second Start: %v; want ErrAlreadyStarted", err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if err := s.Start(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Shutdown: %v; want ErrClosed", err)
	}
}

func TestBindConflictNamesTheAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	o := validOptions()
	o.Port = port
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start(t.Context())
	if !errors.Is(err, ErrListen) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Start on a taken port: %v; want ErrListen and EADDRINUSE", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("error %q does not name the address", err)
	}
	_ = s.Shutdown(t.Context())
}
