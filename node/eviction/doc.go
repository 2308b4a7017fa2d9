// Package eviction is actorlet's node-pressure eviction, as the kubelet's
// eviction manager does it: when memory, disk space, inodes or process IDs
// run low, it sets the node's pressure conditions and evicts pods, one per
// pass, until the pressure is gone.
//
// The package has a pure core and a thin I/O edge:
//   - ParseConfig reads the thresholds from a KubeletConfiguration
//     (evictionHard, evictionSoft, evictionSoftGracePeriod,
//     evictionMinimumReclaim, evictionPressureTransitionPeriod,
//     evictionMaxPodGracePeriod).
//   - ObserveSummary turns a stats summary into Observations.
//   - Decide, given the config, the previous State, the observations, the
//     pods and the time, returns a Decision: the pressure conditions and
//     taints, the threshold to act on, whether node-level reclaim comes
//     first, and the ranked eviction candidates with their messages and
//     grace periods. It does no I/O and does not modify its input.
//   - Manager runs Decide every period against a SummaryProvider, a
//     PodsFunc, an optional Reclaimer and an EvictFunc, and serves the
//     resulting node conditions and taints.
//
// Rules (the kubelet's):
//   - A threshold is met while the signal's available amount is below it
//     (a percentage is of the signal's capacity). A signal with no
//     observation meets nothing.
//   - A pressure condition (MemoryPressure, DiskPressure, PIDPressure) is
//     true while any of its thresholds is met, soft ones included during
//     their grace period, and for the pressure transition period after
//     the last time one was.
//   - A hard threshold acts at once; a soft one once it has been met
//     continuously for its grace period. A threshold that acted stays met
//     until its minimum reclaim is freed too.
//   - Only one threshold is acted on per pass: memory first, then
//     nodefs.available, nodefs.inodesFree, imagefs.available,
//     imagefs.inodesFree, pid.available; hard before soft. It is acted on
//     only if its signal was measured anew since the last pass.
//   - For filesystem signals, node-level reclaim (dead containers, unused
//     images) is tried before evicting.
//   - Pods are ranked: for memory and disk, pods using more than their
//     request of the starved resource first, then lowest priority, then
//     largest usage above request; for PIDs, lowest priority then most
//     processes. Pods without stats come first. Critical pods (static,
//     mirror, or priority >= 2000000000) and terminal pods are never
//     candidates.
//   - A hard eviction kills with no grace period; a soft one with the pod's
//     termination grace period capped by evictionMaxPodGracePeriod (0, the
//     default, caps it at 0, as in the kubelet).
//
// # Caveats
//
// Not supported: allocatableMemory.available and containerfs.* signals,
// kernel memcg notifications (memory is only sampled every period), local
// storage capacity isolation (evicting a pod over its own ephemeral-storage
// limit or an emptyDir over its sizeLimit), and waiting for an evicted pod's
// cleanup before the next pass. Disk ranking uses the pod's total
// ephemeral storage for nodefs and imagefs signals alike, where the kubelet
// with a dedicated image filesystem counts only logs and volumes for nodefs
// and only writable layers for imagefs.
package eviction
