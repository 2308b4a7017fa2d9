// Package apisource delivers the pods the API server binds to this node:
// an informer on pods with spec.nodeName=<node>, handed on as whole sets
// (level-triggered), like the static pod directory's. Many nodes in one
// process (actorlet fleet) share one informer of every bound pod instead
// (Shared), each node's Source reading its own pods from it by node name.
//
// Guarantees:
//   - The first set is delivered only once the informer has listed the
//     API server; a node that starts while the API server is unreachable
//     delivers nothing until it is back (the pods it already runs are not
//     taken down meanwhile: see agent.PodSource).
//   - Every set holds every non-mirror pod bound to the node, sorted by
//     creation time (the order the node admits them in), each a copy
//     without status, resourceVersion and managed fields, so that the API
//     server's bookkeeping (our own status writes included) does not make
//     a pod look changed; the copy is annotated
//     kubernetes.io/config.source=api, as the kubelet does. A copy shares
//     the cache's spec and metadata values and is read only; a pod whose
//     desired part did not change since the last set is handed on as the
//     same copy.
//   - Mirror pods (the API's copies of static pods) are left out of the
//     sets; Lister still shows them.
package apisource
