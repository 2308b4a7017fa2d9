package volumes

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const (
	// defaultTokenSeconds is the API's default expirationSeconds of a
	// serviceAccountToken projection.
	defaultTokenSeconds = 3600
	// maxTokenAge: a token is renewed after a day even if it lives longer.
	maxTokenAge = 24 * time.Hour
)

// tokenCache holds the service account tokens of pods in memory, by pod
// UID, until 80% of their lifetime (or a day) has passed.
type tokenCache struct {
	mu   sync.Mutex
	pods map[string]map[TokenRequest]cachedToken
}

type cachedToken struct {
	value string
	renew time.Time
}

// token returns the token for req, from the cache or asked of r.
func (c *tokenCache) token(ctx context.Context, r TokenRequester, req TokenRequest, now time.Time) (string, error) {
	uid := string(req.PodUID)
	c.mu.Lock()
	t, ok := c.pods[uid][req]
	c.mu.Unlock()
	if ok && now.Before(t.renew) {
		return t.value, nil
	}
	tok, err := r.RequestToken(ctx, req)
	if err != nil {
		return "", fmt.Errorf("request token of service account %q (audience %q): %w", req.ServiceAccountName, req.Audience, err)
	}
	expires := tok.Expires
	if expires.IsZero() {
		expires = now.Add(time.Duration(req.ExpirationSeconds) * time.Second)
	}
	renew := now.Add(expires.Sub(now) * 8 / 10)
	if limit := now.Add(maxTokenAge); renew.After(limit) {
		renew = limit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pods == nil {
		c.pods = map[string]map[TokenRequest]cachedToken{}
	}
	if c.pods[uid] == nil {
		c.pods[uid] = map[TokenRequest]cachedToken{}
	}
	c.pods[uid][req] = cachedToken{value: tok.Value, renew: renew}
	return tok.Value, nil
}

// forget drops a pod's tokens.
func (c *tokenCache) forget(podUID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, podUID)
}

// tokenRequest is the request of a projection for pod.
func tokenRequest(pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) TokenRequest {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(defaultTokenSeconds)
	if p.ExpirationSeconds != nil {
		exp = *p.ExpirationSeconds
	}
	return TokenRequest{
		Namespace:          pod.Namespace,
		ServiceAccountName: sa,
		Audience:           p.Audience,
		ExpirationSeconds:  exp,
		PodName:            pod.Name,
		PodUID:             pod.UID,
	}
}
