package eviction

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observation is one signal's measurement.
type Observation struct {
	Available resource.Quantity
	Capacity  resource.Quantity
	// Time is when it was measured (zero: unknown). A threshold acts on a
	// signal only when its Time moved since the previous pass (or is zero),
	// so stale stats never cause a second eviction.
	Time time.Time
}

// ContainerUsage is one container's usage, from the stats summary.
type ContainerUsage struct {
	// Memory is the working set.
	Memory resource.Quantity
	// EphemeralStorage is the writable layer plus logs.
	EphemeralStorage resource.Quantity
}

// PodUsage is one pod's usage, from the stats summary. A field the summary
// lacks reads as zero.
type PodUsage struct {
	// Memory is the pod's working set.
	Memory resource.Quantity
	// EphemeralStorage and Inodes are the pod's local ephemeral storage
	// used (writable layers, logs and local volumes).
	EphemeralStorage resource.Quantity
	Inodes           resource.Quantity
	// Processes is the number of processes in the pod.
	Processes resource.Quantity
	// Containers is by container name.
	Containers map[string]ContainerUsage
}

// Of is the usage of the resource a signal starves (see Signal.Resource).
func (u PodUsage) Of(r corev1.ResourceName) resource.Quantity {
	switch r {
	case corev1.ResourceMemory:
		return u.Memory.DeepCopy()
	case corev1.ResourceEphemeralStorage:
		return u.EphemeralStorage.DeepCopy()
	case ResourceInodes:
		return u.Inodes.DeepCopy()
	case ResourcePIDs:
		return u.Processes.DeepCopy()
	}
	return resource.Quantity{}
}

// Observations is what one pass sees: the signals measured and the usage of
// each pod the stats know of.
type Observations struct {
	// Signals holds the signals measured; a signal absent here meets none
	// of its thresholds.
	Signals map[Signal]Observation
	// Pods is by pod UID. A pod absent here has no stats, and is ranked
	// first for eviction, as in the kubelet.
	Pods map[types.UID]PodUsage
}

// ObserveSummary derives observations from a stats summary, as the kubelet's
// eviction manager does: memory.available is node.memory.availableBytes over
// a capacity of available plus working set; nodefs.* is node.fs; imagefs.*
// is node.runtime.imageFs; pid.available is node.rlimit.maxpid minus
// curproc. A signal whose stats are incomplete is left out. A nil summary
// gives empty observations.
func ObserveSummary(s *statsv1alpha1.Summary) Observations {
	obs := Observations{Signals: map[Signal]Observation{}, Pods: map[types.UID]PodUsage{}}
	if s == nil {
		return obs
	}
	n := &s.Node
	if m := n.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		obs.Signals[SignalMemoryAvailable] = Observation{
			Available: bytes(*m.AvailableBytes),
			Capacity:  bytes(*m.AvailableBytes + *m.WorkingSetBytes),
			Time:      m.Time.Time,
		}
	}
	observeFs(obs.Signals, n.Fs, SignalNodeFsAvailable, SignalNodeFsInodesFree)
	if n.Runtime != nil {
		observeFs(obs.Signals, n.Runtime.ImageFs, SignalImageFsAvailable, SignalImageFsInodesFree)
	}
	if r := n.Rlimit; r != nil && r.MaxPID != nil && r.NumOfRunningProcesses != nil {
		obs.Signals[SignalPIDAvailable] = Observation{
			Available: count(*r.MaxPID - *r.NumOfRunningProcesses),
			Capacity:  count(*r.MaxPID),
			Time:      r.Time.Time,
		}
	}
	for i := range s.Pods {
		ps := &s.Pods[i]
		if ps.PodRef.UID == "" {
			continue
		}
		obs.Pods[types.UID(ps.PodRef.UID)] = podUsage(ps)
	}
	return obs
}

func observeFs(into map[Signal]Observation, fs *statsv1alpha1.FsStats, space, inodes Signal) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		into[space] = Observation{Available: bytes(*fs.AvailableBytes), Capacity: bytes(*fs.CapacityBytes), Time: fs.Time.Time}
	}
	if fs.InodesFree != nil && fs.Inodes != nil {
		into[inodes] = Observation{Available: count(int64(*fs.InodesFree)), Capacity: count(int64(*fs.Inodes)), Time: fs.Time.Time}
	}
}

func podUsage(ps *statsv1alpha1.PodStats) PodUsage {
	u := PodUsage{Containers: make(map[string]ContainerUsage, len(ps.Containers))}
	if ps.Memory != nil && ps.Memory.WorkingSetBytes != nil {
		u.Memory = bytes(*ps.Memory.WorkingSetBytes)
	}
	var containersDisk uint64
	for i := range ps.Containers {
		cs := &ps.Containers[i]
		var cu ContainerUsage
		if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
			cu.Memory = bytes(*cs.Memory.WorkingSetBytes)
		}
		d := used(cs.Rootfs) + used(cs.Logs)
		cu.EphemeralStorage = bytes(d)
		containersDisk += d
		u.Containers[cs.Name] = cu
	}
	if es := ps.EphemeralStorage; es != nil && es.UsedBytes != nil {
		u.EphemeralStorage = bytes(*es.UsedBytes)
	} else {
		u.EphemeralStorage = bytes(containersDisk)
	}
	if es := ps.EphemeralStorage; es != nil && es.InodesUsed != nil {
		u.Inodes = count(int64(*es.InodesUsed))
	}
	if p := ps.ProcessStats; p != nil && p.ProcessCount != nil {
		u.Processes = count(int64(*p.ProcessCount))
	}
	return u
}

func used(fs *statsv1alpha1.FsStats) uint64 {
	if fs == nil || fs.UsedBytes == nil {
		return 0
	}
	return *fs.UsedBytes
}

func bytes(n uint64) resource.Quantity { return *resource.NewQuantity(int64(n), resource.BinarySI) }

func count(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
