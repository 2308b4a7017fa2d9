package sim

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Well-known kubelet labels.
const (
	// LabelPodUID is the sandbox label the kubelet sets to the pod UID.
	// The runtime uses it (else metadata.uid) to detect two READY
	// sandboxes for one pod.
	LabelPodUID = "io.kubernetes.pod.uid"
)

// sandbox is one pod sandbox. Fields other than ready, rebooted, ipPooled
// and containers never change after RunPodSandbox. Guarded by Runtime.mu.
type sandbox struct {
	id          string
	name        string // reserved name, derived from the metadata
	podUID      string
	meta        *runtimeapi.PodSandboxMetadata
	labels      pairs
	annotations pairs
	handler     string
	logDir      string
	createdAt   int64
	order       uint64 // creation order, for stable listing
	ns          *runtimeapi.NamespaceOption
	ip          netip.Addr // reported IP: a pool address or the host IP
	ipPooled    bool       // ip is held in the pool (until StopPodSandbox)
	ready       bool
	rebooted    bool // made NOTREADY by a simulated reboot, not by StopPodSandbox
	// containers: the sandbox's, oldest first (appended as created): a
	// slice, not a map, for the one or few containers of a pod.
	containers []*container
}

// sandboxName is the name reserved per sandbox; like containerd, the
// runtime refuses a second sandbox with the same name (and attempt)
// while the first exists.
func sandboxName(m *runtimeapi.PodSandboxMetadata) string {
	return fmt.Sprintf("%s_%s_%s_%d", m.GetName(), m.GetNamespace(), m.GetUid(), m.GetAttempt())
}

func (sb *sandbox) state() runtimeapi.PodSandboxState {
	if sb.ready {
		return runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return runtimeapi.PodSandboxState_SANDBOX_NOTREADY
}

// status is the sandbox's CRI status. After StopPodSandbox the IP is
// still reported (as containerd does) though it went back to the pool.
func (sb *sandbox) status() *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id:             sb.id,
		Metadata:       cloneMsg(sb.meta),
		State:          sb.state(),
		CreatedAt:      sb.createdAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: sb.ip.String()},
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: cloneMsg(sb.ns)}},
		Labels:         sb.labels.toMap(),
		Annotations:    sb.annotations.toMap(),
		RuntimeHandler: sb.handler,
	}
}

func (sb *sandbox) toCRI() *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{
		Id:             sb.id,
		Metadata:       cloneMsg(sb.meta),
		State:          sb.state(),
		CreatedAt:      sb.createdAt,
		Labels:         sb.labels.toMap(),
		Annotations:    sb.annotations.toMap(),
		RuntimeHandler: sb.handler,
	}
}

func compareSandboxes(a, b *sandbox) int {
	return cmp.Compare(a.order, b.order)
}

// matches applies a PodSandboxFilter: all set fields, ANDed.
func (sb *sandbox) matches(f *runtimeapi.PodSandboxFilter) bool {
	if f == nil {
		return true
	}
	if f.Id != "" && f.Id != sb.id {
		return false
	}
	if f.State != nil && f.State.State != sb.state() {
		return false
	}
	return sb.labels.matches(f.LabelSelector)
}

// sortSandboxes orders sandboxes oldest first.
func sortSandboxes(s []*sandbox) { slices.SortFunc(s, compareSandboxes) }
