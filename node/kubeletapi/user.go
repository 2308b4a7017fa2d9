package kubeletapi

import "context"

// The identity of unauthenticated requests when Options.Anonymous is set,
// as the API server names it.
const (
	anonymousUser  = "system:anonymous"
	anonymousGroup = "system:unauthenticated"
)

// userInfo is who made a request, as an authenticator found it.
type userInfo struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

type userKey struct{}

func withUser(ctx context.Context, u *userInfo) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// userFrom returns the request's authenticated user, nil outside the
// authentication filter.
func userFrom(ctx context.Context) *userInfo {
	u, _ := ctx.Value(userKey{}).(*userInfo)
	return u
}
