package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Config holds the tunables of the lifecycle. The zero value is not usable;
// start from DefaultConfig.
type Config struct {
	// BackoffInitial is the delay before the second restart of a crashing
	// container (the first restart is immediate, as in the kubelet).
	BackoffInitial time.Duration
	// BackoffMax caps the doubling (the kubelet's maxContainerRestartPeriod).
	BackoffMax time.Duration
	// BackoffReset: a container that ran at least this long before it exited
	// starts its back-off afresh.
	BackoffReset time.Duration
	// OrphanGrace is the grace period given to containers no pod owns.
	OrphanGrace time.Duration
	// KeepDeadContainers is how many exited containers of each container name
	// are kept for inspection (the kubelet's default keeps 1).
	KeepDeadContainers int
	// HookStages are the stages at which the node's lifecycle hooks are
	// asked (see Stage); empty: none, and no hook event is journaled.
	HookStages StageSet
	// Allocatable is the node's allocatable resources: an in-place resize
	// whose pod requests more CPU or memory than it holds is Deferred. Nil:
	// not checked.
	Allocatable corev1.ResourceList
}

// DefaultConfig returns the kubelet's defaults: back-off 10s doubling to 5m,
// reset after 10m of running.
func DefaultConfig() Config {
	return Config{
		BackoffInitial:     10 * time.Second,
		BackoffMax:         5 * time.Minute,
		BackoffReset:       10 * time.Minute,
		OrphanGrace:        2 * time.Second,
		KeepDeadContainers: 1,
	}
}
