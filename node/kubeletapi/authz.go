package kubeletapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// sarAuthorizer asks the API server, with an authorization.k8s.io/v1
// SubjectAccessReview, whether a user may act on a subresource of this
// node. Decisions are cached by the review's spec: allowed ones for
// allowTTL, refused ones for denyTTL; a failed review call is not cached.
type sarAuthorizer struct {
	client   kubernetes.Interface
	nodeName string
	allowTTL time.Duration
	denyTTL  time.Duration
	cache    *ttlCache[decision]
}

// decision is the outcome of one review.
type decision struct {
	allowed bool
	reason  string
}

// spec is the review the authorizer sends for user, verb and subresource.
func (a *sarAuthorizer) spec(u *userInfo, verb, subresource string) authzv1.SubjectAccessReviewSpec {
	s := authzv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authzv1.ResourceAttributes{
			Verb:        verb,
			Version:     "v1",
			Resource:    "nodes",
			Subresource: subresource,
			Name:        a.nodeName,
		},
		User:   u.Name,
		UID:    u.UID,
		Groups: u.Groups,
	}
	if len(u.Extra) > 0 {
		s.Extra = make(map[string]authzv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			s.Extra[k] = authzv1.ExtraValue(v)
		}
	}
	return s
}

func (a *sarAuthorizer) authorize(ctx context.Context, u *userInfo, verb, subresource string) (decision, error) {
	spec := a.spec(u, verb, subresource)
	b, err := json.Marshal(spec) // map keys are sorted: a stable key
	if err != nil {
		return decision{}, fmt.Errorf("encoding SubjectAccessReview for %q: %w", u.Name, err)
	}
	key := string(b)
	if d, ok := a.cache.get(key); ok {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ReviewTimeout)
	defer cancel()
	sar, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
		&authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return decision{}, fmt.Errorf("SubjectAccessReview for %q %s nodes/%s: %w", u.Name, verb, subresource, err)
	}
	d := decision{allowed: sar.Status.Allowed && !sar.Status.Denied, reason: sar.Status.Reason}
	if sar.Status.EvaluationError != "" && d.reason == "" {
		d.reason = sar.Status.EvaluationError
	}
	ttl := a.allowTTL
	if !d.allowed {
		ttl = a.denyTTL
	}
	a.cache.put(key, d, ttl)
	return d, nil
}
