// Package server is actorlet's local HTTP endpoint, the kubelet's healthz
// server: by default on 127.0.0.1:10248.
//
// # Endpoints
//
//	GET /healthz   200 "ok", or 500 with the health check's error text
//	GET /pods      the node's pods as JSON, a v1 PodList (kind PodList, apiVersion v1), with their statuses
//	GET /metrics   the Prometheus metrics of Options.Gatherer
//
// Any other path is 404; another method on a known path is 405 (HEAD is
// served as GET, as net/http does). Responses are not cached.
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
