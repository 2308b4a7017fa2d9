package agent

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/node/kubeletapi"
	"github.com/actorlet/actorlet/node/stats"
)

// startKubeletAPI starts the authenticated kubelet API (see package
// kubeletapi) over the node's pods, stats, logs and runtime, and returns
// the port it listens on.
func (a *Agent) startKubeletAPI(ctx context.Context, o kubeletapi.Options) (int32, error) {
	v := apiView{a: a}
	resource := prometheus.NewRegistry()
	if err := resource.Register(stats.NewResourceCollector(a.stats, a.log.Named("resource-metrics"))); err != nil {
		return 0, err
	}
	o.Pods = kubeletapi.PodListerFunc(a.statuses.List)
	o.Summary, o.ResourceMetrics = a.stats, resource
	o.Logs, o.Containers, o.Streamer = v, v, a.cfg.runtime
	if o.Logger == nil {
		o.Logger = a.log.Named("kubeletapi")
	}
	srv, err := kubeletapi.New(o)
	if err != nil {
		return 0, err
	}
	if err := srv.Start(ctx); err != nil {
		return 0, err
	}
	a.api = srv
	_, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		return 0, fmt.Errorf("kubelet API address %q: %w", srv.Addr(), err)
	}
	p, err := strconv.Atoi(port)
	return int32(p), err
}

// apiView answers the kubelet API's questions about containers from the
// node's pod statuses and the runtime.
type apiView struct{ a *Agent }

var (
	_ kubeletapi.LogLocator              = apiView{}
	_ kubeletapi.ContainerRunningChecker = apiView{}
	_ kubeletapi.ContainerResolver       = apiView{}
)

// pod is the node's pod namespace/name (uid, when given, must match).
func (v apiView) pod(namespace, name, uid string) (*corev1.Pod, error) {
	if p, ok := v.a.statuses.Find(namespace, name, uid); ok {
		return p, nil
	}
	return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, kubeletapi.ErrNotFound)
}

// status is the status of the pod's app, init or ephemeral container name
// (logs, exec and attach serve them all).
func (v apiView) status(namespace, pod, uid, name string) (corev1.ContainerStatus, error) {
	p, err := v.pod(namespace, pod, uid)
	if err != nil {
		return corev1.ContainerStatus{}, err
	}
	for _, cs := range slices.Concat(p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses) {
		if cs.Name == name {
			return cs, nil
		}
	}
	return corev1.ContainerStatus{}, fmt.Errorf("container %s of pod %s/%s: %w", name, namespace, pod, kubeletapi.ErrNotFound)
}

// runtimeID strips the "<runtime>://" of a status's container ID.
func runtimeID(id string) string {
	if _, raw, ok := strings.Cut(id, "://"); ok {
		return raw
	}
	return id
}

// ContainerLogPath is the log file of the container's current instance,
// or of the one before it (previous), as the runtime reports it.
func (v apiView) ContainerLogPath(ctx context.Context, namespace, pod, container string, previous bool) (string, error) {
	cs, err := v.status(namespace, pod, "", container)
	if err != nil {
		return "", err
	}
	// The current instance is the running or last one (a container
	// waiting to restart shows its last run's log, as the kubelet's).
	var id string
	last := cs.LastTerminationState.Terminated
	switch {
	case previous && last != nil:
		id = last.ContainerID
	case previous:
	case cs.ContainerID != "":
		id = cs.ContainerID
	case last != nil:
		id = last.ContainerID
	}
	if id == "" {
		what := "current"
		if previous {
			what = "previous"
		}
		return "", fmt.Errorf("container %s of pod %s/%s has no %s instance: %w", container, namespace, pod, what, kubeletapi.ErrNotFound)
	}
	st, err := v.a.cfg.runtime.ContainerStatus(ctx, runtimeID(id))
	if err != nil {
		return "", fmt.Errorf("container %s of pod %s/%s: %w", container, namespace, pod, err)
	}
	if st.GetLogPath() == "" {
		return "", fmt.Errorf("container %s of pod %s/%s has no log file: %w", container, namespace, pod, kubeletapi.ErrNotFound)
	}
	return st.GetLogPath(), nil
}

// ContainerRunning reports whether the container runs (a followed log ends
// once it does not).
func (v apiView) ContainerRunning(_ context.Context, namespace, pod, container string) (bool, error) {
	cs, err := v.status(namespace, pod, "", container)
	if err != nil {
		return false, err
	}
	return cs.State.Running != nil, nil
}

// ContainerID is the runtime ID of the container's running instance.
func (v apiView) ContainerID(_ context.Context, namespace, pod, podUID, container string) (string, error) {
	cs, err := v.status(namespace, pod, podUID, container)
	if err != nil {
		return "", err
	}
	if cs.State.Running == nil || cs.ContainerID == "" {
		return "", fmt.Errorf("container %s of pod %s/%s is not running: %w", container, namespace, pod, kubeletapi.ErrNotFound)
	}
	return runtimeID(cs.ContainerID), nil
}

// SandboxID is the ID of the pod's ready sandbox.
func (v apiView) SandboxID(ctx context.Context, namespace, pod, podUID string) (string, error) {
	p, err := v.pod(namespace, pod, podUID)
	if err != nil {
		return "", err
	}
	view, err := v.a.cfg.runtime.ListPod(ctx, string(p.UID))
	if err != nil {
		return "", err
	}
	for _, sb := range view.Sandboxes {
		if sb.Ready {
			return sb.ID, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no ready sandbox: %w", namespace, pod, kubeletapi.ErrNotFound)
}
