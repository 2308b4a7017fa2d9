// Package kubeletapi is actorlet's authenticated node API, the kubelet's
// port 10250: what `kubectl logs/exec/attach/port-forward/top` and
// metrics-server reach through the API server (which dials it with its
// --kubelet-client-certificate), and what node agents call with their
// service-account tokens.
//
// # Endpoints
//
//	GET  /healthz                          "ok", or 500 with Options.Healthz's error
//	GET  /pods                             the node's pods, a v1 PodList
//	GET  /stats/summary                    a stats/v1alpha1 Summary (?only_cpu_and_memory=true)
//	POST /stats/summary                    the same, body {"onlyCPUAndMemory": true|false}
//	GET  /metrics, /metrics/resource       Prometheus text from Options.Metrics, ResourceMetrics
//	GET  /containerLogs/{ns}/{pod}/{ctr}   the container's CRI log as text
//	GET|POST /exec/{ns}/{pod}[/{uid}]/{ctr}      upgraded streams, proxied to the
//	GET|POST /attach/{ns}/{pod}[/{uid}]/{ctr}    runtime's streaming server
//	GET|POST /portForward/{ns}/{pod}[/{uid}]
//
// An endpoint whose provider is not set is 404, as is any other path; a
// known path with another method is 405. The server speaks HTTP/1.1 only
// (no ALPN h2), which the SPDY and WebSocket upgrades need anyway.
//
// # Security
//
// Every request, /healthz included, is served over TLS, authenticated and
// authorized before it is routed (see Server.authFilter), by
// k8s.io/apiserver's delegating authenticator and authorizer built as the
// kubelet builds them (auth.go):
//
//   - Authentication: a client certificate that verifies against
//     Options.ClientCAFile (user = common name, groups = organizations; the
//     file is reloaded when it changes), else an "Authorization: Bearer"
//     token accepted by a TokenReview (unless Options.TokenWebhookDisabled).
//     Authenticated users get the group system:authenticated. Without
//     either: 401, or system:anonymous if Options.Anonymous.
//   - Authorization: a SubjectAccessReview for verb (from the method) on
//     nodes/<subresource> named Options.NodeName, the subresource from the
//     path as the kubelet maps it (see attributes.go); refused is 403.
//     Options.AuthorizeAlways allows without asking (AlwaysAllow).
//
// Review results are cached (tokens 2m, accepted or not; authorizations 5m,
// refusals 30s by default); a failed call to the API server is not, and is
// a 401 (authentication) or 500 (authorization).
//
// The serving certificate is Options.ServingCertificate's (renewed through
// the API server), the files', or a self-signed one made in memory.
//
// # Lifecycle
//
// [New] checks the options and loads (or makes) the certificates.
// [Server.Start] binds the listener before it returns, then serves in the
// background until its context is done or [Server.Shutdown] is called.
// Both end the same way: the listener closes, requests and upgraded
// streams in flight get until the shutdown deadline to finish, then
// followed logs end and connections and streams are closed. After Shutdown
// returns, the server's goroutines and handlers have ended.
package kubeletapi
