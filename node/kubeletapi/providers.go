package kubeletapi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The interfaces below are what the server needs from the rest of the
// node. Each is small; their methods may be called concurrently, from
// request goroutines, with the request's context.

// PodLister lists the node's pods with their statuses for /pods
// (podstatus.Cache satisfies it). The server does not change what it
// returns.
type PodLister interface {
	List() []*corev1.Pod
}

// PodListerFunc adapts a function to PodLister.
type PodListerFunc func() []*corev1.Pod

// List calls f.
func (f PodListerFunc) List() []*corev1.Pod { return f() }

// SummaryProvider answers /stats/summary. With onlyCPUAndMemory the
// summary may hold only CPU and memory figures (what metrics-server asks
// for), which should be cheaper to produce.
type SummaryProvider interface {
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error)
}

// LogLocator maps a container of a pod to the path of its CRI log file
// (the runtime writes `<RFC3339Nano> <stdout|stderr> <P|F> <text>` lines
// there). With previous, it is the log of the container's previous
// instance (the one before the last restart). An error wrapping
// ErrNotFound is a 404.
type LogLocator interface {
	ContainerLogPath(ctx context.Context, namespace, pod, container string, previous bool) (string, error)
}

// ContainerRunningChecker is optional: if the LogLocator also implements
// it, a follow=true log request ends once the container is no longer
// running and its log has been read to the end. Without it, a follow ends
// only when the client goes away or the server shuts down.
type ContainerRunningChecker interface {
	ContainerRunning(ctx context.Context, namespace, pod, container string) (bool, error)
}

// ContainerResolver maps the names in an /exec, /attach or /portForward
// path to CRI IDs. podUID is empty unless the path carries one; when it is
// given, a pod with another UID is not a match. An error wrapping
// ErrNotFound is a 404.
type ContainerResolver interface {
	// ContainerID is the CRI ID of the running instance of the container.
	ContainerID(ctx context.Context, namespace, pod, podUID, container string) (string, error)
	// SandboxID is the CRI ID of the pod's ready sandbox.
	SandboxID(ctx context.Context, namespace, pod, podUID string) (string, error)
}

// Streamer asks the container runtime to prepare a streaming session; the
// response's URL is where the runtime's streaming server serves it (the
// CRI RuntimeService's Exec, Attach and PortForward calls). The server
// proxies the client's upgraded connection to that URL.
type Streamer interface {
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
}
