package kubeletapi

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"go.uber.org/zap"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// authFilter authenticates and authorizes every request before next sees
// it:
//
//   - a path that is not canonical (with "." or ".." elements or empty
//     ones) is 400, so what is authorized is what is routed;
//   - k8s.io/apiserver's delegating authenticator names the user (a
//     verified client certificate, else a bearer token accepted by
//     TokenReview); with neither, the request is 401 "Unauthorized", unless
//     Options.Anonymous makes it system:anonymous (not when it carried
//     invalid credentials);
//   - a method without an API verb is 405;
//   - the delegating authorizer (SubjectAccessReviews, cached) decides for
//     the path's subresources (see subresourcesFor): none allowed is 403 with
//     the user, verb and subresources in the message; a failed review is 500.
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
		resp, ok, err := s.auth.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				s.log.Debug("authentication failed", zap.String("path", p), zap.Error(err))
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		u := resp.User
		verb := verbFor(r.Method)
		if verb == "" {
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		attrs := attributes(u, verb, s.opts.NodeName, r)
		allowed := false
		var subs, reasons []string
		for _, attr := range attrs {
			sub := attr.GetSubresource()
			subs = append(subs, sub)
			d, reason, err := s.auth.authz.Authorize(r.Context(), attr)
			if err != nil {
				s.log.Error("authorization error", zap.String("user", u.GetName()), zap.String("verb", verb),
					zap.String("subresource", sub), zap.Error(err))
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)",
					u.GetName(), verb, sub), http.StatusInternalServerError)
				return
			}
			if d == authorizer.DecisionAllow {
				allowed = true
				break
			}
			if reason != "" {
				reasons = append(reasons, reason)
			}
		}
		if !allowed {
			s.log.Debug("forbidden", zap.String("user", u.GetName()), zap.String("verb", verb),
				zap.Strings("subresources", subs), zap.String("path", p), zap.Strings("reasons", reasons))
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=[%s])",
				u.GetName(), verb, strings.Join(subs, " ")), http.StatusForbidden)
			return
		}
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}
