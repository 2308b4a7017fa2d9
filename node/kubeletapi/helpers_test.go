package kubeletapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

const testNode = "node-1"

// fakeAPI is a fake clientset whose TokenReviews accept the tokens in
// users and whose SubjectAccessReviews are decided by allow. It records
// the reviews it answers.
type fakeAPI struct {
	client *fake.Clientset

	mu           sync.Mutex
	users        map[string]authnv1.UserInfo
	allow        func(authzv1.SubjectAccessReviewSpec) bool
	tokenReviews []authnv1.TokenReviewSpec
	sars         []authzv1.SubjectAccessReviewSpec
}

func newFakeAPI() *fakeAPI {
	f := &fakeAPI{
		client: fake.NewClientset(),
		users:  map[string]authnv1.UserInfo{},
		allow:  func(authzv1.SubjectAccessReviewSpec) bool { return true },
	}
	f.client.PrependReactor("create", "tokenreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		tr := a.(clienttesting.CreateAction).GetObject().(*authnv1.TokenReview).DeepCopy()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.tokenReviews = append(f.tokenReviews, tr.Spec)
		if u, ok := f.users[tr.Spec.Token]; ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: u, Audiences: tr.Spec.Audiences}
		} else {
			tr.Status = authnv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		return true, tr, nil
	})
	f.client.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		sar := a.(clienttesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview).DeepCopy()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sars = append(f.sars, sar.Spec)
		sar.Status.Allowed = f.allow(sar.Spec)
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC rule"
		}
		return true, sar, nil
	})
	return f
}

func (f *fakeAPI) setAllow(allow func(authzv1.SubjectAccessReviewSpec) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allow = allow
}

// allowSubresources allows only the given subresources.
func allowSubresources(subs ...string) func(authzv1.SubjectAccessReviewSpec) bool {
	return func(s authzv1.SubjectAccessReviewSpec) bool {
		return slices.Contains(subs, s.ResourceAttributes.Subresource)
	}
}

// takeSARs returns the reviews asked since the last call.
func (f *fakeAPI) takeSARs() []authzv1.SubjectAccessReviewSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sars
	f.sars = nil
	return s
}

// setUser makes token authenticate as u; a nil u removes it.
func (f *fakeAPI) setUser(token string, u *authnv1.UserInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u == nil {
		delete(f.users, token)
		return
	}
	f.users[token] = *u
}

func (f *fakeAPI) firstTokenReview() authnv1.TokenReviewSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenReviews[0]
}

func (f *fakeAPI) tokenReviewCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.tokenReviews)
}

// testEnv is a started server with its PKI and fake API server.
type testEnv struct {
	t      *testing.T
	s      *Server
	api    *fakeAPI
	ca     *testCA // signs the serving and client certificates
	clock  *fakeClock
	client tls.Certificate
}

// start starts a Server on 127.0.0.1 with a serving certificate of a test
// CA, client certificates of the same CA and a fake API server; mutate may
// change the options. The server is shut down when the test ends.
func start(t *testing.T, mutate func(*Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	ca := newTestCA(t, "test-ca")
	certFile, keyFile := writeKeyPair(t, dir, ca.issue(t, testNode, nil, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1")))
	api := newFakeAPI()
	opts := Options{
		Address:      "127.0.0.1",
		NodeName:     testNode,
		TLSCertFile:  certFile,
		TLSKeyFile:   keyFile,
		ClientCAFile: writeFile(t, dir, "client-ca.crt", ca.pem),
		Client:       api.client,
		Pods:         PodListerFunc(func() []*corev1.Pod { return nil }),
	}
	if mutate != nil {
		mutate(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clock := &fakeClock{now: time.Now()}
	s.clock = clock.Now
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// context.Canceled: the test already shut it down without grace.
		if err := s.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &testEnv{t: t, s: s, api: api, ca: ca, clock: clock, client: ca.clientCert(t, "apiserver-kubelet-client", "system:masters")}
}

// tlsConfig trusts the test CA and presents certs.
func (e *testEnv) tlsConfig(certs ...tls.Certificate) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(e.ca.cert)
	return &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}
}

// httpClient is a client presenting certs (none for a token or anonymous
// request).
func (e *testEnv) httpClient(certs ...tls.Certificate) *http.Client {
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: e.tlsConfig(certs...), DisableKeepAlives: true},
		Timeout:   20 * time.Second,
	}
}

// request sends a request and returns the response with its body read.
// header may set "Authorization" and others.
func (e *testEnv) request(c *http.Client, method, path, body string, header ...string) (*http.Response, string) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, "https://"+e.s.Addr()+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, string(b)
}

// get sends GET path with the test's client certificate.
func (e *testEnv) get(path string) (*http.Response, string) {
	e.t.Helper()
	return e.request(e.httpClient(e.client), http.MethodGet, path, "")
}

// eventually polls cond until it holds or 10s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
