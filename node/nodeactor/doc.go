// Package nodeactor is the NodeActor: it registers the node's Node object,
// keeps its status (conditions, capacity, addresses, node info) and renews its
// Lease in kube-node-lease, as the kubelet does. It runs in its own actor, so
// node and lease work never waits behind pod work.
//
// What the status says is decided by the pure [Status] function from what
// the actor gathered (the runtime's health, the machine); the actor does the
// API calls: register, then a status update every StatusUpdateFrequency when
// something changed and at least every StatusReportFrequency, and a Lease
// renewal every RenewInterval. A Node deleted under it is registered again.
package nodeactor
