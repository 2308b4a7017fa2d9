// Package server serves actorlet's two plain-HTTP local endpoints, the
// kubelet's health port and its read-only port. Both are a [Server]; what
// it serves depends on which providers its [Options] hold.
//
// # The health port (healthzPort, 10248 on healthzBindAddress, 127.0.0.1)
//
// Options with only Healthz: it serves
//
//	GET /healthz   200 "ok", or 500 with the health check's error text
//
// and nothing else, as the kubelet's 10248. Pods and metrics are never on
// it: they are on the read-only port (below) or behind authentication on
// the kubelet API (package kubeletapi, 10250).
//
// # The read-only port (readOnlyPort, the kubelet's 10255; 0, off, by default)
//
// Options with Pods, Gatherer and Summary: unauthenticated, as the
// kubelet's read-only server, it serves
//
//	GET /healthz         as above
//	GET /pods            the node's pods as JSON, a v1 PodList (kind PodList, apiVersion v1), with their statuses
//	GET /metrics         the Prometheus metrics of Options.Gatherer
//	GET /stats/summary   a stats/v1alpha1 Summary (?only_cpu_and_memory=true)
//
// Anyone who reaches it reads every pod's spec, environment values
// included: the caller binds it to loopback unless told otherwise.
//
// # Both
//
// A path whose provider is not set is 404, as is any other path; another
// method on a known path is 405 (HEAD is served as GET, as net/http does).
// Responses are not cached.
//
// # Lifecycle
//
// [New] only checks the options. [Server.Start] binds the listener before
// it returns, so an address in use is its error, naming the address; it then
// serves in the background until its context is done or [Server.Shutdown]
// is called. Both end the same way: the listener closes, requests in flight
// get until the shutdown deadline to finish, then their connections are
// closed. After Shutdown returns, the server's goroutines have ended.
package server
