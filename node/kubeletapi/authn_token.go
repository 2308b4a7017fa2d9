package kubeletapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// tokenAuthenticator authenticates a request by its bearer token, asking
// the API server with an authentication.k8s.io/v1 TokenReview. Results
// are cached by the token's SHA-256 (the token itself is not kept):
// accepted tokens for okTTL, rejected ones for denyTTL; a failed review
// call is not cached. A request without a bearer token is not its business.
type tokenAuthenticator struct {
	client    kubernetes.Interface
	audiences []string
	okTTL     time.Duration
	denyTTL   time.Duration
	cache     *ttlCache[tokenResult]
}

// tokenResult is a cached review: user nil means rejected, for reason.
type tokenResult struct {
	user   *userInfo
	reason string
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func (a *tokenAuthenticator) authenticate(r *http.Request) (*userInfo, bool, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	res, ok := a.cache.get(key)
	if !ok {
		var err error
		res, err = a.review(r.Context(), token)
		if err != nil {
			return nil, false, err
		}
		ttl := a.okTTL
		if res.user == nil {
			ttl = a.denyTTL
		}
		a.cache.put(key, res, ttl)
	}
	if res.user == nil {
		return nil, false, errors.New(res.reason)
	}
	return res.user, true, nil
}

func (a *tokenAuthenticator) review(ctx context.Context, token string) (tokenResult, error) {
	ctx, cancel := context.WithTimeout(ctx, ReviewTimeout)
	defer cancel()
	tr, err := a.client.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: a.audiences},
	}, metav1.CreateOptions{})
	if err != nil {
		return tokenResult{}, fmt.Errorf("TokenReview: %w", err)
	}
	st := tr.Status
	if !st.Authenticated {
		reason := "token rejected by TokenReview"
		if st.Error != "" {
			reason += ": " + st.Error
		}
		return tokenResult{reason: reason}, nil
	}
	if len(a.audiences) > 0 && !slices.ContainsFunc(st.Audiences, func(aud string) bool {
		return slices.Contains(a.audiences, aud)
	}) {
		return tokenResult{reason: fmt.Sprintf("token audiences %q do not include any of %q", st.Audiences, a.audiences)}, nil
	}
	u := &userInfo{
		Name:   st.User.Username,
		UID:    st.User.UID,
		Groups: st.User.Groups,
	}
	if len(st.User.Extra) > 0 {
		u.Extra = make(map[string][]string, len(st.User.Extra))
		for k, v := range st.User.Extra {
			u.Extra[k] = []string(v)
		}
	}
	if u.Name == "" {
		return tokenResult{reason: "TokenReview authenticated the token with no user name"}, nil
	}
	return tokenResult{user: u}, nil
}
