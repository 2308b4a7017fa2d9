// Package podstatus holds the node's view of its pods' statuses, as the
// PodActors last published them, and derives the kubelet's pod metrics from
// it.
//
// # What the Cache guarantees
//
//   - A [Cache] is an actors.StatusSink: PodStatus only takes a mutex for
//     the time of a map update and a few gauge updates; it never waits on a
//     reader, a subscriber or the network.
//   - Per pod UID, statuses only go forward: an update whose Seq is not
//     newer than the one held is dropped. A Removed update is applied
//     whatever its Seq and forgets the UID entirely (its Seq included), so a
//     pod that comes back with the same UID, as a static pod whose manifest
//     is restored does, starts afresh.
//   - The Cache owns its pods: it stores a deep copy of what it is given,
//     never changes a stored pod, and hands out deep copies, but for
//     EachUnfinished, which hands its callback the stored pods, read only.
//   - An update without a Pod (an orphan) keeps its UID's Seq but is not
//     visible through List or Get and counts in no metric.
//   - Metrics reflect the stored pods at the moment PodStatus returns, and a
//     subscriber is notified after that.
//
// # Metrics
//
// Registered by [New], with the kubelet's names where the kubelet has one:
//
//	kubelet_running_pods                      gauge: pods whose condition PodReadyToStartContainers is True
//	kubelet_running_containers{container_state}
//	                                          gauge: containers of all pods (init, regular, ephemeral) by state:
//	                                          running: State.Running;
//	                                          exited: State.Terminated, or waiting with a last termination;
//	                                          created: waiting, with a container ID and no last termination;
//	                                          unknown: a status with no state at all.
//	                                          A waiting container without a container ID does not exist yet
//	                                          and is not counted.
//	kubelet_pod_start_duration_seconds        histogram, the kubelet's buckets: once per pod UID, the first
//	                                          time the pod is Running with all its containers running,
//	                                          the time since the pod was accepted (PodUpdate.AcceptedAt).
//	                                          Pods accepted before the Cache was made (replayed from an
//	                                          earlier run's journal) are not observed, so a restart of
//	                                          actorlet does not report hours-long starts.
//	actorlet_pods{phase}                      gauge: pods by status.phase (Pending, Running, Succeeded,
//	                                          Failed, Unknown; an empty or unknown phase counts as Unknown).
package podstatus
