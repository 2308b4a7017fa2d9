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
// Its config is kept as records (see records.go): what PodSandboxStatus
// and ListPodSandbox give back is rebuilt from them.
type sandbox struct {
	id          string
	meta        sandboxMeta // reserves the sandbox's name (String)
	labels      pairs
	annotations pairs
	logDir      string
	createdAt   int64
	order       uint64       // creation order, for stable listing
	more        *sandboxMore // nil if the config fits the records
	ip          netip.Addr   // reported IP: a pool address or the host IP
	ns          nsModes      // unless more.ns
	ipPooled    bool         // ip is held in the pool (until StopPodSandbox)
	ready       bool
	rebooted    bool // made NOTREADY by a simulated reboot, not by StopPodSandbox
	// containers: the sandbox's, oldest first (appended as created): a
	// slice, not a map, for the one or few containers of a pod.
	containers []*container
}

// sandboxName is the name of a sandbox as containerd reserves it:
// <name>_<namespace>_<uid>_<attempt>. Like containerd, the runtime
// refuses a second sandbox with the same metadata while the first
// exists (Runtime.sandboxNamedLocked), and names sandboxes so in messages.
func sandboxName(m sandboxMeta) string {
	return fmt.Sprintf("%s_%s_%s_%d", m.name, m.namespace, m.uid, m.attempt)
}

// String is sb's reserved name (sandboxName), made when asked.
func (sb *sandbox) String() string { return sandboxName(sb.meta) }

// podUID is the pod UID of sb: its label LabelPodUID, else that of its
// metadata.
func (sb *sandbox) podUID() string {
	if v, _ := sb.labels.get(LabelPodUID); v != "" {
		return v
	}
	return sb.meta.uid
}

// containerNamed is sb's container of that metadata name and attempt, or
// nil.
func (sb *sandbox) containerNamed(name string, attempt uint32) *container {
	for _, c := range sb.containers {
		if c.metaName.Value() == name && c.attempt == attempt {
			return c
		}
	}
	return nil
}

// moreOf is sb.more, made if sb had none.
func (sb *sandbox) moreOf() *sandboxMore {
	if sb.more == nil {
		sb.more = &sandboxMore{}
	}
	return sb.more
}

// metadata is sb's metadata as given.
func (sb *sandbox) metadata() *runtimeapi.PodSandboxMetadata {
	if sb.more != nil && sb.more.meta != nil {
		return cloneMsg(sb.more.meta)
	}
	return sb.meta.toCRI()
}

// handler is sb's runtime handler ("" for the default).
func (sb *sandbox) handler() string {
	if sb.more == nil {
		return ""
	}
	return sb.more.handler
}

// namespaceOptions are sb's namespace options as given (empty if none).
func (sb *sandbox) namespaceOptions() *runtimeapi.NamespaceOption {
	if sb.more != nil && sb.more.ns != nil {
		return cloneMsg(sb.more.ns)
	}
	return sb.ns.toCRI()
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
		Metadata:       sb.metadata(),
		State:          sb.state(),
		CreatedAt:      sb.createdAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: sb.ip.String()},
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: sb.namespaceOptions()}},
		Labels:         sb.labels.toMap(),
		Annotations:    sb.annotations.toMap(),
		RuntimeHandler: sb.handler(),
	}
}

func (sb *sandbox) toCRI() *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{
		Id:             sb.id,
		Metadata:       sb.metadata(),
		State:          sb.state(),
		CreatedAt:      sb.createdAt,
		Labels:         sb.labels.toMap(),
		Annotations:    sb.annotations.toMap(),
		RuntimeHandler: sb.handler(),
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
