// Package tracing is actorlet's OpenTelemetry tracing, as the kubelet's
// (KEP-2831, GA in v1.34): a TracerProvider made from the
// KubeletConfiguration's tracing block by k8s.io/component-base/tracing, the
// span names and attributes the kubelet uses for a pod's syncs, and the
// attributes that join a trace to the pod's journal.
//
// Spans (see README "Tracing"):
//
//	syncPod / syncTerminatingPod / syncTerminatedPod   one PodActor sync that journaled events or started effects
//	  └─ createPodSandbox, pullImage, createContainer, startContainer,
//	     killContainer, removeContainer, stopPodSandbox, removePodSandbox   one effect, carried out by a ContainerActor
//	       └─ runtime.v1.RuntimeService/<RPC>, runtime.v1.ImageService/<RPC>   the CRI calls (otelgrpc)
//
// A sync that handles an effect's result is linked to that effect's span.
// Every span carries the pod (k8s.pod.uid, k8s.pod, k8s.pod.name,
// k8s.namespace.name) and the journal sequence it concerns
// (actorlet.journal.seq; a sync's appended range in
// actorlet.journal.seq.first/last and one span event per journaled event),
// so that `actorlet journal events` and a trace line up.
//
// Without a tracing block nothing is exported: the provider is a noop one,
// and no gRPC instrumentation is installed on the CRI connection.
package tracing
