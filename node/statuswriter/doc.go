// Package statuswriter sends the pod statuses the PodActors decide to the
// API server, and keeps the mirror pods of static pods, as the kubelet's
// status and mirror-pod managers do.
//
// Guarantees:
//   - Only the PodActor decides a status: the Writer never computes one,
//     it merges the PodActor's status with the conditions the kubelet does
//     not own (PodScheduled from the scheduler, DisruptionTarget, readiness
//     gates' conditions) already on the object.
//   - Versions only go up: an update whose journal sequence is not newer
//     than the last one taken for the pod is ignored, so a late write never
//     replaces a newer status.
//   - Bursts coalesce: a pod waiting in the queue is written once, with its
//     newest status. Failed writes are retried per pod with exponential
//     back-off (RetryMin doubling to RetryMax); nothing is dropped while the
//     API server is unreachable, and a resync re-checks every pod: a
//     status someone else changed since the last write (the node lifecycle
//     controller marking pods not Ready after an outage) is written again.
//   - Each write carries the pod's UID as a precondition: a status or a
//     deletion never reaches a new pod that reuses the name.
//   - A pod the node removed after its deletion (deletionTimestamp) is
//     deleted from the API with grace period 0 and a UID precondition.
//   - A static pod gets a mirror pod (annotation kubernetes.io/config.mirror,
//     owned by the Node) that carries its status; it is re-created when it
//     is deleted or stale, and deleted with its static pod.
//
// PodStatus never blocks (a map update and a queue add): it is called from
// PodActors.
package statuswriter
