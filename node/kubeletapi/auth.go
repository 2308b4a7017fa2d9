package kubeletapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// webhookRetryBackoff is the apiserver's default retry of its authentication
// and authorization webhooks, which the kubelet uses for its TokenReview and
// SubjectAccessReview calls.
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// auth is the kubelet API's authentication and authorization, built as the
// kubelet builds them (cmd/kubelet/app/auth.go) from k8s.io/apiserver's
// delegating authenticator and authorizer.
type auth struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	// clientCA reloads Options.ClientCAFile when it changes; nil without one.
	clientCA *dynamiccertificates.DynamicFileCAContent
}

// newAuth builds the authenticator (x509 client certificates against the
// client CA, bearer tokens by TokenReview with its cache, anonymous requests
// when enabled; authenticated users get system:authenticated) and the
// authorizer (SubjectAccessReview with its allow and deny caches, or
// AlwaysAllow).
func newAuth(o *Options) (*auth, error) {
	a := &auth{}
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: o.Anonymous},
		CacheTTL:                 o.TokenCacheTTL,
		TokenAccessReviewTimeout: ReviewTimeout,
	}
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: loading client CA file %s: %w", ErrInvalidOptions, o.ClientCAFile, err)
		}
		a.clientCA, cfg.ClientCertificateCAContentProvider = ca, ca
	}
	if !o.TokenWebhookDisabled {
		cfg.TokenAccessReviewClient = o.Client.AuthenticationV1()
		cfg.WebhookRetryBackoff = webhookRetryBackoff()
	}
	authn, _, err := cfg.New()
	if err != nil {
		return nil, fmt.Errorf("%w: authentication: %w", ErrInvalidOptions, err)
	}
	a.authn = authn
	if o.AuthorizeAlways {
		a.authz = authorizerfactory.NewAlwaysAllowAuthorizer()
		return a, nil
	}
	a.authz, err = authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: o.Client.AuthorizationV1(),
		AllowCacheTTL:             o.AuthzAllowCacheTTL,
		DenyCacheTTL:              o.AuthzDenyCacheTTL,
		WebhookRetryBackoff:       webhookRetryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("%w: authorization: %w", ErrInvalidOptions, err)
	}
	return a, nil
}

// run reloads the client CA file until ctx ends.
func (a *auth) run(ctx context.Context) {
	if a.clientCA != nil {
		go a.clientCA.Run(ctx, 1)
	}
}

// attributes are the authorization attributes of a request by u: one per
// subresource of its path (see subresourcesFor), on this node.
func attributes(u user.Info, verb, nodeName string, r *http.Request) []authorizer.Attributes {
	var out []authorizer.Attributes
	for _, sub := range subresourcesFor(r.URL.Path) {
		out = append(out, authorizer.AttributesRecord{
			User: u, Verb: verb, APIVersion: "v1", Resource: "nodes", Subresource: sub, Name: nodeName,
			ResourceRequest: true, Path: r.URL.Path,
		})
	}
	return out
}

type userKey struct{}

func withUser(ctx context.Context, u user.Info) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// userFrom returns the request's authenticated user, nil outside the
// authentication filter.
func userFrom(ctx context.Context) user.Info {
	u, _ := ctx.Value(userKey{}).(user.Info)
	return u
}
