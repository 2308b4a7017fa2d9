package sim

import (
	"unique"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The runtime keeps what RunPodSandbox and CreateContainer were given as
// plain values, not as the request's messages: a generated message
// carries its own state, size cache and unknown fields and is an
// allocation of its own, and a container's half dozen (metadata, image,
// two mounts, resources) cost more than the values they hold. The records
// below hold the fields of the common case, in the sandbox or container
// itself or in one small allocation; a message with anything more (a
// field rarely set, or fields unknown to this cri-api from a newer
// client) is kept whole instead, as a copy (containerMore, sandboxMore).
// Values that repeat across pods (resources, image specs, names) are
// shared (unique.Handle). Either way, a response rebuilds exactly the
// message given: TestResponsesGiveBackConfigs sets each field of these
// messages in turn, so a field a newer cri-api adds fails it until its
// record holds it or the message is kept whole when it is set.

// hasUnknown reports whether m, not nil, has fields unknown to this
// cri-api.
func hasUnknown(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) > 0 }

// sandboxMeta is a PodSandboxMetadata. Sandboxes of equal metadata would
// have the same name (Runtime.sandboxNamedLocked).
type sandboxMeta struct {
	name, uid, namespace string
	attempt              uint32
}

func newSandboxMeta(m *runtimeapi.PodSandboxMetadata) sandboxMeta {
	return sandboxMeta{name: m.GetName(), uid: m.GetUid(), namespace: m.GetNamespace(), attempt: m.GetAttempt()}
}

func (m sandboxMeta) toCRI() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: m.name, Uid: m.uid, Namespace: m.namespace, Attempt: m.attempt}
}

// nsModes is a NamespaceOption without target ID and user namespace.
type nsModes struct {
	network, pid, ipc runtimeapi.NamespaceMode
}

// newNSModes records ns (nil is no option set); ok is false if ns has
// more than nsModes holds.
func newNSModes(ns *runtimeapi.NamespaceOption) (m nsModes, ok bool) {
	if ns == nil {
		return nsModes{}, true
	}
	if ns.TargetId != "" || ns.UsernsOptions != nil || hasUnknown(ns) {
		return nsModes{}, false
	}
	return nsModes{network: ns.Network, pid: ns.Pid, ipc: ns.Ipc}, true
}

func (m nsModes) toCRI() *runtimeapi.NamespaceOption {
	return &runtimeapi.NamespaceOption{Network: m.network, Pid: m.pid, Ipc: m.ipc}
}

// mount is a Mount without ID mappings, image, image sub-path and mount
// options.
type mount struct {
	containerPath, hostPath string
	propagation             runtimeapi.MountPropagation
	readonly                bool
	selinuxRelabel          bool
	recursiveReadOnly       bool
}

// newMounts records ms: as mounts, or, if one of them has more than a
// mount holds, as copies of the messages (in which case mounts is nil).
func newMounts(ms []*runtimeapi.Mount) (mounts []mount, msgs []*runtimeapi.Mount) {
	if len(ms) == 0 {
		return nil, nil
	}
	mounts = make([]mount, len(ms))
	for i, m := range ms {
		if m == nil || len(m.UidMappings) > 0 || len(m.GidMappings) > 0 || m.Image != nil ||
			m.ImageSubPath != "" || len(m.MountOptions) > 0 || hasUnknown(m) {
			return nil, cloneMsgs(ms)
		}
		mounts[i] = mount{
			containerPath: m.ContainerPath, hostPath: m.HostPath, propagation: m.Propagation,
			readonly: m.Readonly, selinuxRelabel: m.SelinuxRelabel, recursiveReadOnly: m.RecursiveReadOnly,
		}
	}
	return mounts, nil
}

func (m *mount) toCRI() *runtimeapi.Mount {
	return &runtimeapi.Mount{
		ContainerPath: m.containerPath, HostPath: m.hostPath, Propagation: m.propagation,
		Readonly: m.readonly, SelinuxRelabel: m.selinuxRelabel, RecursiveReadOnly: m.recursiveReadOnly,
	}
}

// resources are LinuxContainerResources without cpusets, hugepage
// limits and unified cgroup settings. Containers of the same requests and
// limits have the same: they share them (unique.Handle).
type resources struct {
	cpuPeriod, cpuQuota, cpuShares int64
	memoryLimit, memorySwapLimit   int64
	oomScoreAdj                    int64
}

// noResources is the handle of no resources (the zero Handle).
var noResources unique.Handle[resources]

// newResources records r: noResources for nil; ok is false if r has more
// than resources hold.
func newResources(r *runtimeapi.LinuxContainerResources) (res unique.Handle[resources], ok bool) {
	if r == nil {
		return noResources, true
	}
	if r.CpusetCpus != "" || r.CpusetMems != "" || len(r.HugepageLimits) > 0 || len(r.Unified) > 0 || hasUnknown(r) {
		return noResources, false
	}
	return unique.Make(resources{
		cpuPeriod: r.CpuPeriod, cpuQuota: r.CpuQuota, cpuShares: r.CpuShares,
		memoryLimit: r.MemoryLimitInBytes, memorySwapLimit: r.MemorySwapLimitInBytes, oomScoreAdj: r.OomScoreAdj,
	}), true
}

func (r resources) toCRI() *runtimeapi.LinuxContainerResources {
	return &runtimeapi.LinuxContainerResources{
		CpuPeriod: r.cpuPeriod, CpuQuota: r.cpuQuota, CpuShares: r.cpuShares,
		MemoryLimitInBytes: r.memoryLimit, MemorySwapLimitInBytes: r.memorySwapLimit, OomScoreAdj: r.oomScoreAdj,
	}
}

// imageRecord is a container's image spec (its image and user-specified
// image; the whole spec is in containerMore when it has more) and the
// image it resolved to. Containers of one image spec share it
// (unique.Handle).
type imageRecord struct {
	image, userSpecified string
	img                  *image // gone from the store once removed
}

// plainImageSpec reports whether spec has nothing but an image and a
// user-specified image.
func plainImageSpec(spec *runtimeapi.ImageSpec) bool {
	return len(spec.Annotations) == 0 && spec.RuntimeHandler == "" && spec.ImageRef == "" && !hasUnknown(spec)
}

// sandboxMore is what a sandbox keeps of its config beside its records,
// when the config has it: copies of messages too rich for them.
type sandboxMore struct {
	meta    *runtimeapi.PodSandboxMetadata // with unknown fields
	ns      *runtimeapi.NamespaceOption    // more than nsModes
	handler string                         // the runtime handler, if not the default
}

// containerMore is what a container keeps beside its records, when it
// has it: copies of messages too rich for them, and its user.
type containerMore struct {
	meta      *runtimeapi.ContainerMetadata       // with unknown fields
	image     *runtimeapi.ImageSpec               // more than image and user-specified image
	mounts    []*runtimeapi.Mount                 // if one has more than a mount
	resources *runtimeapi.LinuxContainerResources // more than resources
	user      *runtimeapi.ContainerUser
	logDir    string // CreateContainer's, if not its sandbox's
}
