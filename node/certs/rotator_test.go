package certs

import (
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	clocktesting "k8s.io/utils/clock/testing"
)

const lifetime = 100 * time.Hour

type rotatorEnv struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	s     *signer
	store certificate.FileStore
	r     *Rotator
}

func newRotatorEnv(t *testing.T, req Request, rotateNow bool) *rotatorEnv {
	t.Helper()
	e := &rotatorEnv{t: t, clock: clocktesting.NewFakeClock(time.Now())}
	e.s = newSigner(t, e.clock.Now, lifetime)
	var err error
	dir := t.TempDir()
	if e.store, err = certificate.NewFileStore(ClientPrefix, dir, dir, "", ""); err != nil {
		t.Fatal(err)
	}
	e.r, err = NewRotator(RotatorOptions{
		Store: e.store, Request: req, RotateNow: rotateNow, Clock: e.clock,
		Jitter: func() float64 { return 0.5 }, // the deadline at 80 % of the lifetime
		Client: func(*tls.Certificate) (kubernetes.Interface, error) { return e.s.client, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run starts the rotator until the test ends.
func (e *rotatorEnv) run() {
	done := make(chan struct{})
	ctx := e.t.Context()
	go func() {
		defer close(done)
		e.r.Run(ctx)
	}()
	e.t.Cleanup(func() { <-done })
}

// waitIdle waits until the rotator sleeps on the clock having sent n CSRs.
func (e *rotatorEnv) waitIdle(n int) {
	e.t.Helper()
	eventually(e.t, "the rotator to wait", func() bool { return len(e.s.requests()) == n && e.clock.HasWaiters() })
}

// TestRotationOnAnInjectedClock: the first certificate at once, then a new
// one at 80 % of each one's lifetime (jitter fixed at its middle), and none
// before.
func TestRotationOnAnInjectedClock(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	if e.r.Current() != nil || !e.r.Deadline().Equal(e.clock.Now()) {
		t.Fatalf("without a certificate: current %v, deadline %v (now %v)", e.r.Current(), e.r.Deadline(), e.clock.Now())
	}
	e.run()
	e.waitIdle(1)
	first := e.r.Current()
	if first == nil || first.Leaf.Subject.CommonName != "system:node:node-1" {
		t.Fatalf("first certificate %v", first)
	}
	if want := first.Leaf.NotBefore.Add(80 * time.Hour); !e.r.Deadline().Equal(want) {
		t.Errorf("deadline %v; want NotBefore + 80h = %v", e.r.Deadline(), want)
	}
	if stored, err := e.store.Current(); err != nil || stored.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) != 0 {
		t.Errorf("store holds %v (%v); want the first certificate", stored, err)
	}

	e.clock.Step(79 * time.Hour) // before the deadline: the timer does not fire
	if n := len(e.s.requests()); n != 1 || e.r.Current() != first {
		t.Fatalf("at 79h: %d CSRs, certificate changed %v", n, e.r.Current() != first)
	}
	e.clock.Step(2 * time.Hour)
	e.waitIdle(2)
	second := e.r.Current()
	if second == nil || second.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) == 0 {
		t.Fatalf("at 81h: certificate %v; want a new one", second)
	}
	if want := second.Leaf.NotBefore.Add(80 * time.Hour); !e.r.Deadline().Equal(want) || second.Leaf.NotBefore.Before(e.clock.Now().Add(-time.Second)) {
		t.Errorf("next deadline %v; want %v", e.r.Deadline(), want)
	}
	csr := e.s.requests()[1]
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		t.Errorf("renewal CSR signer %s usages %v", csr.Spec.SignerName, csr.Spec.Usages)
	}
}

// TestRotationRetriesWithBackoff: a failed rotation is retried after 2 s,
// then 4 s, on the clock; the certificate in use stays until one succeeds.
func TestRotationRetriesWithBackoff(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	e.run()
	e.waitIdle(1)
	first := e.r.Current()
	e.s.setFailCreate(true)
	e.clock.Step(81 * time.Hour)
	e.waitIdle(2)
	e.clock.Step(2 * time.Second)
	e.waitIdle(3)
	e.clock.Step(2 * time.Second) // the second back-off is 4 s
	if n := len(e.s.requests()); n != 3 || e.r.Current() != first {
		t.Fatalf("2 s into a 4 s back-off: %d CSRs; certificate changed %v", n, e.r.Current() != first)
	}
	e.s.setFailCreate(false)
	e.clock.Step(2 * time.Second)
	e.waitIdle(4)
	if e.r.Current() == first {
		t.Error("the certificate was not renewed once the API server answered")
	}
}

// TestRotateNowReplacesAValidCertificate: the kubelet renews the certificate
// a kubeadm control plane's kubeconfig carries at once.
func TestRotateNowReplacesAValidCertificate(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	if err := e.r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, _ := certificate.NewFileStore(ClientPrefix, dir, dir, "", "")
	cert := e.r.Current()
	if _, err := store.Update(pemCert(cert), pemKey(t, cert)); err != nil {
		t.Fatal(err)
	}
	r, err := NewRotator(RotatorOptions{Store: store, Request: ClientRequest("node-1"), RotateNow: true, Clock: e.clock,
		Client: func(*tls.Certificate) (kubernetes.Interface, error) { return e.s.client, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Current() == nil || !r.Deadline().Equal(e.clock.Now()) {
		t.Fatalf("RotateNow: current %v, deadline %v; want the stored certificate and now", r.Current(), r.Deadline())
	}
	if err := r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r.Deadline().Equal(e.clock.Now()) {
		t.Error("still forced after a rotation")
	}
}

func TestCurrentIsNilOnceExpired(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	if err := e.r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(lifetime + time.Second)
	if e.r.Current() != nil {
		t.Error("Current returns an expired certificate")
	}
}

// TestServingCertificate: kubernetes.io/kubelet-serving with the node's
// names; a certificate that misses one of them is renewed at once.
func TestServingCertificate(t *testing.T) {
	ips := []net.IP{net.ParseIP("10.88.104.10")}
	e := newRotatorEnv(t, ServingRequest("node-1", []string{"node-1"}, ips), false)
	if err := e.r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	csr := e.s.requests()[0]
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName || !slices.Contains(csr.Spec.Usages, certificatesv1.UsageServerAuth) {
		t.Errorf("serving CSR signer %s usages %v", csr.Spec.SignerName, csr.Spec.Usages)
	}
	leaf := e.r.Current().Leaf
	if !slices.Equal(leaf.DNSNames, []string{"node-1"}) || len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(ips[0]) {
		t.Errorf("serving certificate names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if e.r.Deadline().Equal(e.clock.Now()) {
		t.Error("a fitting certificate is due at once")
	}
	// The node has another address now.
	more := ServingRequest("node-1", []string{"node-1"}, append(ips, net.ParseIP("10.88.105.10")))
	e.r.o.Request = more
	if !e.r.Deadline().Equal(e.clock.Now()) {
		t.Error("a certificate without the node's new address is not due at once")
	}
	none := newRotatorEnv(t, ServingRequest("node-1", []string{"node-1"}, nil), false)
	if err := none.r.Rotate(t.Context()); !errors.Is(err, ErrNothingToRequest) {
		t.Errorf("serving certificate without an IP: %v; want ErrNothingToRequest", err)
	}
}
