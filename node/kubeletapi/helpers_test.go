package kubeletapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const testNode = "node-1"

// fakeAPI is a fake API server over HTTP (the apiserver's webhook clients
// talk REST, which client-go's fake clientset does not serve): its
// TokenReviews accept the tokens in users, its SubjectAccessReviews are
// decided by allow, and it fails every review while fail is set. It records
// the reviews it answers.
type fakeAPI struct {
	client kubernetes.Interface

	mu           sync.Mutex
	users        map[string]authnv1.UserInfo
	allow        func(authzv1.SubjectAccessReviewSpec) bool
	fail         bool
	tokenReviews []authnv1.TokenReviewSpec
	sars         []authzv1.SubjectAccessReviewSpec
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{
		users: map[string]authnv1.UserInfo{},
		allow: func(authzv1.SubjectAccessReviewSpec) bool { return true },
	}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.client = client
	return f
}

// serve answers POSTs of TokenReviews and SubjectAccessReviews.
func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		// Forbidden is not retried by the webhook clients.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden, Message: "the test API server refuses"})
		return
	}
	var out any
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authnv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.tokenReviews = append(f.tokenReviews, tr.Spec)
		if u, ok := f.users[tr.Spec.Token]; ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: u, Audiences: tr.Spec.Audiences}
		} else {
			tr.Status = authnv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		out = &tr
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authzv1.SubjectAccessReview
		if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.sars = append(f.sars, sar.Spec)
		sar.Status.Allowed = f.allow(sar.Spec)
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC rule"
		}
		out = &sar
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeAPI) setFail(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
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
	api := newFakeAPI(t)
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
	return &testEnv{t: t, s: s, api: api, ca: ca, client: ca.clientCert(t, "apiserver-kubelet-client", "system:masters")}
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
