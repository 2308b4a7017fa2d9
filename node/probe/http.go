package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// maxRedirects is how many same-host redirects are followed.
const maxRedirects = 10

// sameHostRedirects follows a redirect only to the host of the first
// request; a redirect elsewhere ends the request with that response.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// newHTTPRequest builds the GET of a probe or hook. defaultPort is used
// for port 0 (hooks: 80); 0 means the port is required.
func newHTTPRequest(ctx context.Context, t Target, a *corev1.HTTPGetAction, userAgent string, defaultPort int) (*http.Request, error) {
	scheme := strings.ToLower(string(a.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host, err := t.host(a.Host)
	if err != nil {
		return nil, err
	}
	var port int
	if defaultPort != 0 && a.Port.IntValue() == 0 && (a.Port.StrVal == "" || a.Port.StrVal == "0") {
		port = defaultPort
	} else if port, err = t.port(a.Port); err != nil {
		return nil, err
	}
	u, err := url.Parse(a.Path)
	if err != nil {
		u = &url.URL{Path: a.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", u, err)
	}
	for _, h := range a.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", userAgent)
	}
	if _, ok := req.Header["Accept"]; !ok {
		req.Header.Set("Accept", "*/*")
	} else if req.Header.Get("Accept") == "" {
		req.Header.Del("Accept")
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	return req, nil
}

// redirectWarning starts the message of a Success that the kubelet's HTTP
// prober returns as a Warning (a redirect to another host, not followed).
const redirectWarning = "Probe terminated redirects"

// httpProbe: 200..399 is Success (a redirect to another host, not
// followed, too); anything else, or no answer within timeout, Failure.
func (r *Runner) httpProbe(ctx context.Context, t Target, a *corev1.HTTPGetAction, timeout time.Duration) (Result, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := newHTTPRequest(ctx, t, a, UserAgent, 0)
	if err != nil {
		return Failure, err.Error()
	}
	res, err := r.httpClient().Do(req)
	if err != nil {
		return Failure, err.Error()
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return Failure, fmt.Sprintf("reading the answer of %s: %v", req.URL, err)
	}
	switch {
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		return Success, fmt.Sprintf("%s, Response body: %s", redirectWarning, body)
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusMultipleChoices:
		return Success, string(body)
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode)
}

// httpHook: a status outside 200..399 is an error.
func (r *Runner) httpHook(ctx context.Context, t Target, a *corev1.HTTPGetAction) (string, error) {
	req, err := newHTTPRequest(ctx, t, a, HookUserAgent, 80)
	if err != nil {
		return "", fmt.Errorf("http hook of container %q: %w", t.name(), err)
	}
	res, err := r.httpClient().Do(req)
	if err != nil {
		return "", fmt.Errorf("http hook of container %q: %w", t.name(), err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil && !errors.Is(err, context.Canceled) {
		return "", fmt.Errorf("http hook of container %q: reading the answer of %s: %w", t.name(), req.URL, err)
	}
	if res.StatusCode < http.StatusOK || res.StatusCode >= http.StatusBadRequest {
		return string(body), fmt.Errorf("http hook of container %q: GET %s: status %d", t.name(), req.URL, res.StatusCode)
	}
	return string(body), nil
}
