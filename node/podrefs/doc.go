// Package podrefs reads the ConfigMaps and Secrets that a node's pods refer
// to in their containers' environment (env valueFrom, envFrom) from the API
// server: it is the podspec.EnvSource of a node that is a cluster member.
//
// Each lookup is one GET, made when a container is created, so a container
// sees the object as it is at its creation (the kubelet's "Get" change
// detection strategy; its default watches the objects instead). The Node
// authorizer lets a node get exactly the ConfigMaps and Secrets referenced
// by pods bound to it; a reference that the authorizer has not yet linked
// to the node (the pod was just bound) is Forbidden, and the container's
// creation fails with CreateContainerConfigError and is tried again.
//
// Nothing read here is cached or logged: Secret values stay in the memory
// of the creation that needed them.
package podrefs
