package podrefs_test

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/actorlet/actorlet/node/podrefs"
	"github.com/actorlet/actorlet/node/volumes"
)

func TestTokensAsksForAPodBoundToken(t *testing.T) {
	client := fake.NewClientset()
	expires := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	var got *authenticationv1.TokenRequest
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" || a.GetNamespace() != "ns" {
			t.Errorf("action %s %s in %s", a.GetVerb(), a.GetSubresource(), a.GetNamespace())
		}
		got = a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		out := got.DeepCopy()
		out.Status = authenticationv1.TokenRequestStatus{Token: "tok", ExpirationTimestamp: metav1.NewTime(expires)}
		return true, out, nil
	})
	tok, err := podrefs.NewTokens(client).RequestToken(context.Background(), volumes.TokenRequest{
		Namespace: "ns", ServiceAccountName: "default", Audience: "vault", ExpirationSeconds: 3600, PodName: "web", PodUID: "uid-1"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Value != "tok" || !tok.Expires.Equal(expires) {
		t.Fatalf("token %+v", tok)
	}
	ref := got.Spec.BoundObjectRef
	if ref == nil || ref.Kind != "Pod" || ref.Name != "web" || ref.UID != "uid-1" ||
		len(got.Spec.Audiences) != 1 || got.Spec.Audiences[0] != "vault" || *got.Spec.ExpirationSeconds != 3600 {
		t.Fatalf("request %+v", got.Spec)
	}
}
