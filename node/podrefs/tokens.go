package podrefs

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/actorlet/actorlet/node/volumes"
)

// Tokens requests service account tokens bound to pods through the
// TokenRequest API, as the kubelet does for projected volumes (the Node
// authorizer lets a node ask for the service accounts of its pods). It
// implements volumes.TokenRequester and is safe for concurrent use.
type Tokens struct {
	client kubernetes.Interface
}

var _ volumes.TokenRequester = (*Tokens)(nil)

// NewTokens returns a Tokens requesting with client. It does no I/O.
func NewTokens(client kubernetes.Interface) *Tokens { return &Tokens{client: client} }

// RequestToken implements volumes.TokenRequester.
func (t *Tokens) RequestToken(ctx context.Context, req volumes.TokenRequest) (volumes.Token, error) {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: req.PodName, UID: req.PodUID},
	}}
	if req.Audience != "" {
		tr.Spec.Audiences = []string{req.Audience}
	}
	if req.ExpirationSeconds > 0 {
		tr.Spec.ExpirationSeconds = &req.ExpirationSeconds
	}
	got, err := t.client.CoreV1().ServiceAccounts(req.Namespace).CreateToken(ctx, req.ServiceAccountName, tr, metav1.CreateOptions{})
	if err != nil {
		return volumes.Token{}, fmt.Errorf("token of service account %s/%s for pod %s: %w", req.Namespace, req.ServiceAccountName, req.PodName, err)
	}
	return volumes.Token{Value: got.Status.Token, Expires: got.Status.ExpirationTimestamp.Time}, nil
}
