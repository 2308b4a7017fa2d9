package kubeletapi

import (
	"crypto/x509"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
)

func TestClientCertAuthorized(t *testing.T) {
	e := start(t, nil)
	resp, body := e.get("/healthz")
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("GET /healthz = %d %q; want 200 ok", resp.StatusCode, body)
	}
	want := []authzv1.SubjectAccessReviewSpec{{
		ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: "get", Version: "v1", Resource: "nodes", Subresource: "healthz", Name: testNode,
		},
		User: "apiserver-kubelet-client",
		// The delegating authenticator adds system:authenticated, as the
		// kubelet's does.
		Groups: []string{"system:masters", "system:authenticated"},
	}}
	got := e.api.takeSARs()
	// The x509 authenticator names the certificate in the user's extra.
	if len(got) == 1 && strings.HasPrefix(strings.Join(got[0].Extra["authentication.kubernetes.io/credential-id"], ""), "X509SHA256=") {
		got[0].Extra = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reviews %+v; want %+v", got, want)
	}
}

func TestClientCertForbidden(t *testing.T) {
	e := start(t, nil)
	e.api.setAllow(allowSubresources())
	resp, body := e.get("/healthz")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET /healthz = %d %q; want 403", resp.StatusCode, body)
	}
	want := "Forbidden (user=apiserver-kubelet-client, verb=get, resource=nodes, subresource(s)=[healthz proxy])"
	if !strings.Contains(body, want) {
		t.Errorf("body %q; want it to contain %q", body, want)
	}
	// The fine-grained subresource first, then proxy.
	var subs []string
	for _, s := range e.api.takeSARs() {
		subs = append(subs, s.ResourceAttributes.Subresource)
	}
	if !reflect.DeepEqual(subs, []string{"healthz", "proxy"}) {
		t.Errorf("reviewed subresources %q; want [healthz proxy]", subs)
	}
}

func TestProxyFallbackAllows(t *testing.T) {
	e := start(t, nil)
	e.api.setAllow(allowSubresources("proxy"))
	if resp, body := e.get("/pods"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /pods with nodes/proxy only = %d %q; want 200", resp.StatusCode, body)
	}
	// /stats has no fallback: nodes/proxy is not enough.
	e.api.setAllow(allowSubresources("proxy"))
	if resp, _ := e.get("/metrics"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics with nodes/proxy only = %d; want 403", resp.StatusCode)
	}
}

func TestClientCertOfAnotherCAIsUnauthorized(t *testing.T) {
	e := start(t, nil)
	other := newTestCA(t, "other-ca").clientCert(t, "mallory", "system:masters")
	resp, _ := e.request(e.httpClient(other), http.MethodGet, "/pods", "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /pods with a foreign client certificate = %d; want 401", resp.StatusCode)
	}
	if got := e.api.takeSARs(); len(got) != 0 {
		t.Errorf("reviews %+v for an unauthenticated request", got)
	}
}

func TestServerCertificateIsNotAClientCertificate(t *testing.T) {
	e := start(t, nil)
	// Signed by the client CA, but for server authentication only.
	c := e.ca.issue(t, "not-a-client", nil, x509.ExtKeyUsageServerAuth)
	resp, _ := e.request(e.httpClient(c), http.MethodGet, "/pods", "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /pods with a serving certificate = %d; want 401", resp.StatusCode)
	}
}

func TestNoCredentialsIsUnauthorized(t *testing.T) {
	e := start(t, nil)
	for _, path := range []string{"/healthz", "/pods", "/metrics", "/no/such/path"} {
		resp, body := e.request(e.httpClient(), http.MethodGet, path, "")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Unauthorized") {
			t.Errorf("GET %s without credentials = %d %q; want 401 Unauthorized", path, resp.StatusCode, body)
		}
	}
}

func TestAnonymous(t *testing.T) {
	e := start(t, func(o *Options) { o.Anonymous = true })
	resp, _ := e.request(e.httpClient(), http.MethodGet, "/healthz", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("anonymous GET /healthz = %d; want 200", resp.StatusCode)
	}
	sars := e.api.takeSARs()
	if len(sars) != 1 || sars[0].User != "system:anonymous" || !reflect.DeepEqual(sars[0].Groups, []string{"system:unauthenticated"}) {
		t.Errorf("reviews %+v; want one for system:anonymous", sars)
	}
	// A bad token is not anonymous.
	resp, _ = e.request(e.httpClient(), http.MethodGet, "/healthz", "", "Authorization", "Bearer wrong")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET with a bad token and Anonymous = %d; want 401", resp.StatusCode)
	}
}

func TestBearerToken(t *testing.T) {
	e := start(t, nil)
	e.api.setUser("good-token", &authnv1.UserInfo{
		Username: "system:serviceaccount:kube-system:metrics-server",
		UID:      "uid-1",
		Groups:   []string{"system:serviceaccounts", "system:authenticated"},
		Extra:    map[string]authnv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"ms-1"}},
	})
	c := e.httpClient()
	for i := range 2 {
		resp, body := e.request(c, http.MethodGet, "/metrics/resource", "", "Authorization", "Bearer good-token")
		// No ResourceMetrics: authorized, then 404.
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("request %d: GET /metrics/resource = %d %q; want 404 after authorization", i, resp.StatusCode, body)
		}
	}
	if n := e.api.tokenReviewCount(); n != 1 {
		t.Errorf("%d TokenReviews for two requests with one token; want 1 (cached)", n)
	}
	if got := e.api.firstTokenReview(); got.Token != "good-token" || len(got.Audiences) != 0 {
		t.Errorf("TokenReview spec %+v", got)
	}
	sars := e.api.takeSARs()
	if len(sars) != 1 {
		t.Fatalf("%d reviews; want 1 (the second cached)", len(sars))
	}
	want := authzv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: testNode,
		},
		User:   "system:serviceaccount:kube-system:metrics-server",
		UID:    "uid-1",
		Groups: []string{"system:serviceaccounts", "system:authenticated"},
		Extra:  map[string]authzv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"ms-1"}},
	}
	if !reflect.DeepEqual(sars[0], want) {
		t.Errorf("review %+v; want %+v", sars[0], want)
	}

	for _, h := range []string{"Bearer bad-token", "Bearer ", "Basic Zm9vOmJhcg=="} {
		resp, _ := e.request(c, http.MethodGet, "/pods", "", "Authorization", h)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /pods with %q = %d; want 401", h, resp.StatusCode)
		}
	}
}

func TestSARAttributesPerPath(t *testing.T) {
	// Denials cached for a nanosecond: every request is reviewed.
	e := start(t, func(o *Options) { o.AuthzDenyCacheTTL = time.Nanosecond })
	e.api.setAllow(allowSubresources()) // deny all: every subresource is asked
	for _, tc := range []struct {
		method, path string
		verb         string
		subs         []string
	}{
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"POST", "/stats/summary", "create", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/logs/kubelet.log", "get", []string{"log"}},
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/containerLogs/ns/pod/ctr", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/ctr", "create", []string{"proxy"}},
		{"GET", "/attach/ns/pod/ctr", "get", []string{"proxy"}},
		{"POST", "/portForward/ns/pod", "create", []string{"proxy"}},
		{"PUT", "/run/ns/pod/ctr", "update", []string{"proxy"}},
		{"PATCH", "/whatever", "patch", []string{"proxy"}},
		{"DELETE", "/statsx", "delete", []string{"proxy"}},
	} {
		resp, _ := e.request(e.httpClient(e.client), tc.method, tc.path, "")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s = %d; want 403", tc.method, tc.path, resp.StatusCode)
		}
		var subs []string
		for _, s := range e.api.takeSARs() {
			ra := s.ResourceAttributes
			if ra.Verb != tc.verb || ra.Resource != "nodes" || ra.Name != testNode || ra.Version != "v1" || ra.Group != "" || ra.Namespace != "" {
				t.Errorf("%s %s: review attributes %+v", tc.method, tc.path, *ra)
			}
			subs = append(subs, ra.Subresource)
		}
		if !reflect.DeepEqual(subs, tc.subs) {
			t.Errorf("%s %s: reviewed subresources %q; want %q", tc.method, tc.path, subs, tc.subs)
		}
	}
}

func TestUnmappedMethodAndBadPath(t *testing.T) {
	e := start(t, nil)
	if resp, _ := e.request(e.httpClient(e.client), http.MethodOptions, "/pods", ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("OPTIONS /pods = %d; want 405", resp.StatusCode)
	}
	// Authorized as stats, routed as exec: refused before either.
	if resp, _ := e.request(e.httpClient(e.client), http.MethodGet, "/exec/ns/%2e%2e/%2e%2e/stats/summary", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET with a dot-dot path = %d; want 400", resp.StatusCode)
	}
	if got := e.api.takeSARs(); len(got) != 0 {
		t.Errorf("reviews %+v; want none", got)
	}
}

func TestAuthorizationErrorIs500(t *testing.T) {
	e := start(t, nil)
	e.api.setAllow(func(authzv1.SubjectAccessReviewSpec) bool { return true })
	e.api.setFail(true)
	resp, body := e.get("/pods")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "Authorization error") {
		t.Errorf("GET /pods with a failing SubjectAccessReview = %d %q; want 500 Authorization error", resp.StatusCode, body)
	}
}

// TestReviewCacheTTLs: with TTLs of a nanosecond nothing stays cached, so a
// changed answer counts at once (TestBearerToken shows the default TTLs
// caching).
func TestReviewCacheTTLs(t *testing.T) {
	e := start(t, func(o *Options) {
		o.TokenCacheTTL, o.AuthzAllowCacheTTL, o.AuthzDenyCacheTTL = time.Nanosecond, time.Nanosecond, time.Nanosecond
	})
	e.api.setUser("t", &authnv1.UserInfo{Username: "alice"})
	c := e.httpClient()
	get := func() int {
		resp, _ := e.request(c, http.MethodGet, "/pods", "", "Authorization", "Bearer t")
		return resp.StatusCode
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("GET /pods = %d; want 200", code)
	}
	e.api.setAllow(allowSubresources())
	if code := get(); code != http.StatusForbidden {
		t.Fatalf("GET /pods after the authorizer changed its mind = %d; want 403", code)
	}
	e.api.setUser("t", nil)
	if code := get(); code != http.StatusUnauthorized {
		t.Fatalf("GET /pods after the token was revoked = %d; want 401", code)
	}
	if n := e.api.tokenReviewCount(); n != 3 {
		t.Errorf("%d TokenReviews; want 3", n)
	}
}

func TestAlwaysAllowAndNoTokenWebhook(t *testing.T) {
	e := start(t, func(o *Options) { o.AuthorizeAlways, o.TokenWebhookDisabled = true, true })
	e.api.setAllow(allowSubresources())
	e.api.setUser("t", &authnv1.UserInfo{Username: "alice"})
	if resp, _ := e.get("/pods"); resp.StatusCode != http.StatusOK {
		t.Errorf("AlwaysAllow: GET /pods = %d; want 200", resp.StatusCode)
	}
	if got := e.api.takeSARs(); len(got) != 0 {
		t.Errorf("AlwaysAllow sent reviews %+v", got)
	}
	if resp, _ := e.request(e.httpClient(), http.MethodGet, "/pods", "", "Authorization", "Bearer t"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token without the webhook: %d; want 401", resp.StatusCode)
	}
	if n := e.api.tokenReviewCount(); n != 0 {
		t.Errorf("%d TokenReviews with the webhook off", n)
	}
}
