// Package kubeletmetrics exports the kubelet's metric families that
// actorlet's work produces, with the kubelet's names, types, labels and
// buckets (k8s.io/kubernetes pkg/kubelet/metrics, pkg/kubelet/prober), on
// a prometheus registry:
//
//	kubelet_runtime_operations_total{operation_type}          counter: CRI calls ("run_podsandbox", "create_container", ...)
//	kubelet_runtime_operations_errors_total{operation_type}   counter: CRI calls that failed
//	kubelet_runtime_operations_duration_seconds{operation_type} histogram, ExponentialBuckets(.005, 2.5, 14)
//	kubelet_pleg_relist_duration_seconds                      histogram, DefBuckets: one full runtime listing
//	kubelet_pleg_relist_interval_seconds                      histogram, DefBuckets: between two listings' starts
//	kubelet_pleg_last_seen_seconds                            gauge: Unix time of the last listing
//	kubelet_started_pods_total, kubelet_started_pods_errors_total        counters: sandbox attempts, failures
//	kubelet_started_containers_total{container_type}                     counter: container attempts
//	kubelet_started_containers_errors_total{container_type,code}         counter: failed ones (code: the waiting reason)
//	kubelet_image_pull_duration_seconds{image_size_in_bytes}  histogram: real pulls only
//	kubelet_evictions{eviction_signal}                        counter
//	kubelet_pod_worker_duration_seconds{operation_type}      histogram, DefBuckets: a PodActor handling one input
//	kubelet_terminated_containers_total{container_type,exit_code,reason} counter: container exits (once per attempt)
//	kubelet_containers_per_pod_count                         histogram, ExponentialBuckets(1, 2, 5): accepted pods
//	kubelet_node_name{node}                                  gauge: 1 (SetNodeName)
//	kubelet_admission_rejections_total{reason}               counter: rejected pods (the kubelet's reason allowlist)
//	storage_operation_duration_seconds{volume_plugin,operation_name,status,migrated} histogram: volume set-up and teardown
//	prober_probe_total{probe_type,result,container,pod,namespace,pod_uid} counter: every probe run
//
// and actorlet's own:
//
//	actorlet_journal_append_duration_seconds   histogram: one pod actor's append, group commit and fsync included
//	actorlet_journal_append_events             histogram: events per append
//	actorlet_effects_in_flight{effect}         gauge: effects container actors carry out now (actors.EffectObserver)
//	actorlet_actor_mailbox_messages            gauge: messages waiting in pod and container actors' mailboxes
//	                                           (protoactor's actor.MailboxMiddleware)
//
// The nodes of one process may share the families (Metrics.Node): each
// family then counts for all of them, kubelet_node_name has one series per
// node, and kubelet_pleg_last_seen_seconds is the last listing of any.
//
// Guarantees: every method is safe for concurrent use and never blocks;
// nothing is counted for work adopted on recovery (the run that did it
// counted it), and counters start at zero with each process, as the
// kubelet's do.
package kubeletmetrics
