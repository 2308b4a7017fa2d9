package eviction

import (
	corev1 "k8s.io/api/core/v1"
)

// Signal names an eviction signal, as in the kubelet's evictionHard and
// evictionSoft settings. Every signal is an amount still available, and a
// threshold on it is met when the amount falls below the threshold.
type Signal string

// The supported signals. The kubelet's allocatableMemory.available and
// containerfs.* signals are not supported.
const (
	// SignalMemoryAvailable is the node's available memory (bytes).
	SignalMemoryAvailable Signal = "memory.available"
	// SignalNodeFsAvailable is the free space of the node filesystem (bytes).
	SignalNodeFsAvailable Signal = "nodefs.available"
	// SignalNodeFsInodesFree is the free inodes of the node filesystem.
	SignalNodeFsInodesFree Signal = "nodefs.inodesFree"
	// SignalImageFsAvailable is the free space of the image filesystem (bytes).
	SignalImageFsAvailable Signal = "imagefs.available"
	// SignalImageFsInodesFree is the free inodes of the image filesystem.
	SignalImageFsInodesFree Signal = "imagefs.inodesFree"
	// SignalPIDAvailable is the number of process IDs still available.
	SignalPIDAvailable Signal = "pid.available"
)

// Signals lists the supported signals in the order the kubelet acts on them
// when several thresholds are met at once: memory first.
var Signals = []Signal{
	SignalMemoryAvailable,
	SignalNodeFsAvailable,
	SignalNodeFsInodesFree,
	SignalImageFsAvailable,
	SignalImageFsInodesFree,
	SignalPIDAvailable,
}

// ResourceInodes and ResourcePIDs name the starved resource of the inode and
// PID signals in eviction messages, as the kubelet does.
const (
	ResourceInodes corev1.ResourceName = "inodes"
	ResourcePIDs   corev1.ResourceName = "pids"
)

// Valid reports whether s is a supported signal.
func (s Signal) Valid() bool { return s.order() >= 0 }

// order is s's place in Signals, or -1.
func (s Signal) order() int {
	for i, k := range Signals {
		if k == s {
			return i
		}
	}
	return -1
}

// Resource is the resource a signal starves: memory, ephemeral-storage,
// inodes or pids ("" for an unknown signal).
func (s Signal) Resource() corev1.ResourceName {
	switch s {
	case SignalMemoryAvailable:
		return corev1.ResourceMemory
	case SignalNodeFsAvailable, SignalImageFsAvailable:
		return corev1.ResourceEphemeralStorage
	case SignalNodeFsInodesFree, SignalImageFsInodesFree:
		return ResourceInodes
	case SignalPIDAvailable:
		return ResourcePIDs
	}
	return ""
}

// Condition is the node condition a met threshold on s sets ("" for an
// unknown signal).
func (s Signal) Condition() corev1.NodeConditionType {
	switch s {
	case SignalMemoryAvailable:
		return corev1.NodeMemoryPressure
	case SignalNodeFsAvailable, SignalNodeFsInodesFree, SignalImageFsAvailable, SignalImageFsInodesFree:
		return corev1.NodeDiskPressure
	case SignalPIDAvailable:
		return corev1.NodePIDPressure
	}
	return ""
}

// NodeReclaimable reports whether node-level reclaim (removing dead
// containers and unused images) can relieve s, so it is tried before
// evicting a pod: true for the filesystem signals.
func (s Signal) NodeReclaimable() bool {
	return s.Resource() == corev1.ResourceEphemeralStorage || s.Resource() == ResourceInodes
}
