package kubeletapi

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"go.uber.org/zap"
)

// authFilter authenticates and authorizes every request before next sees
// it:
//
//   - a path that is not canonical (with "." or ".." elements or empty
//     ones) is 400, so what is authorized is what is routed;
//   - a verified client certificate, else an accepted bearer token, names
//     the user; with neither, the request is 401 "Unauthorized", unless
//     Options.Anonymous makes it system:anonymous (not when it carried
//     invalid credentials);
//   - a method without an API verb is 405;
//   - SubjectAccessReviews for the path's subresources (see
//     subresourcesFor) decide: none allowed is 403 with the user, verb and
//     subresources in the message; a failed review is 500.
//
// The Authorization header is removed before next, so it is not proxied
// to the runtime's streaming server.
func (s *Server) authFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if clean := path.Clean(p); p == "" || (clean != p && clean+"/" != p) {
			http.Error(w, "Bad Request: non-canonical path", http.StatusBadRequest)
			return
		}
		u := s.authenticate(r)
		if u == nil {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := verbFor(r.Method)
		if verb == "" {
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		subs := subresourcesFor(p)
		allowed := false
		var reasons []string
		for _, sub := range subs {
			d, err := s.authz.authorize(r.Context(), u, verb, sub)
			if err != nil {
				s.log.Error("authorization error", zap.String("user", u.Name), zap.String("verb", verb),
					zap.String("subresource", sub), zap.Error(err))
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)",
					u.Name, verb, sub), http.StatusInternalServerError)
				return
			}
			if d.allowed {
				allowed = true
				break
			}
			if d.reason != "" {
				reasons = append(reasons, d.reason)
			}
		}
		if !allowed {
			s.log.Debug("forbidden", zap.String("user", u.Name), zap.String("verb", verb),
				zap.Strings("subresources", subs), zap.String("path", p), zap.Strings("reasons", reasons))
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=[%s])",
				u.Name, verb, strings.Join(subs, " ")), http.StatusForbidden)
			return
		}
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}

// authenticate tries the client certificate, then the bearer token. It
// returns nil if neither names a user and anonymous requests are refused,
// or if credentials were given but none were valid (those requests are
// never anonymous, as in the kubelet).
func (s *Server) authenticate(r *http.Request) *userInfo {
	failed := false
	for _, a := range s.authenticators {
		u, ok, err := a(r)
		if err != nil {
			s.log.Debug("authentication failed", zap.String("path", r.URL.Path), zap.Error(err))
			failed = true
			continue
		}
		if ok {
			return u
		}
	}
	if s.opts.Anonymous && !failed {
		return &userInfo{Name: anonymousUser, Groups: []string{anonymousGroup}}
	}
	return nil
}
