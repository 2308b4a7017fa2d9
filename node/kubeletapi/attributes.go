package kubeletapi

import (
	"net/http"
	"strings"
)

// The SubjectAccessReview of a request asks whether the user may <verb>
// the node's <subresource>: resource "nodes" of the core group, version
// v1, named after the node. The kubelet's mapping (v1.37, fine-grained
// authorization being GA):
//
//	/stats, /stats/*        stats
//	/metrics, /metrics/*    metrics
//	/logs, /logs/*          log
//	/checkpoint/*           checkpoint
//	/statusz                statusz
//	/flagz                  configz
//	/pods, /runningpods/*   pods, then proxy
//	/healthz, /healthz/*    healthz, then proxy
//	/configz                configz, then proxy
//	anything else           proxy (/containerLogs, /exec, /attach,
//	                        /portForward, /run, ...)
//
// With two subresources, the request is allowed if either is. The kubelet
// no longer serves /spec; it falls under proxy.

// subresourcesFor returns the subresources to check for a request path, in
// order.
func subresourcesFor(path string) []string {
	var subs []string
	switch {
	case isSubpath(path, "/pods"), isSubpath(path, "/allocatedPods"), isSubpath(path, "/runningpods"):
		subs = append(subs, "pods")
	case isSubpath(path, "/healthz"):
		subs = append(subs, "healthz")
	case isSubpath(path, "/configz"):
		subs = append(subs, "configz")
	}
	switch {
	case isSubpath(path, "/stats"):
		return append(subs, "stats")
	case isSubpath(path, "/metrics"):
		return append(subs, "metrics")
	case isSubpath(path, "/logs"):
		return append(subs, "log")
	case isSubpath(path, "/checkpoint"):
		return append(subs, "checkpoint")
	case isSubpath(path, "/statusz"):
		return append(subs, "statusz")
	case isSubpath(path, "/flagz"):
		return append(subs, "configz")
	}
	return append(subs, "proxy")
}

// isSubpath tells whether path is root or below it.
func isSubpath(path, root string) bool {
	rest, ok := strings.CutPrefix(path, root)
	return ok && (rest == "" || rest[0] == '/')
}

// verbFor maps an HTTP method to the API verb, as the kubelet does (HEAD,
// which the kubelet leaves without a verb, reads like GET). Other methods
// have no verb and are refused.
func verbFor(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}
