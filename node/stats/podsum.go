package stats

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// podSum adds up a pod's container stats, for the pod figures a runtime without sandbox
// stats does not give, and for ephemeral storage. A sum is known only if every container
// gave its part: a partial sum would understate the pod.
type podSum struct {
	n                               int
	cpuAt, memAt                    time.Time // the latest sample
	cpuTime, nanoCores, ws, use, rs sum
	diskBytes, diskInodes           sum
}

// sum is a total that is unknown once any part is missing.
type sum struct {
	v       uint64
	missing bool
}

func (s *sum) add(p *uint64) {
	if p == nil {
		s.missing = true
		return
	}
	s.v += *p
}

func (s sum) ptr(n int) *uint64 {
	if s.missing || n == 0 {
		return nil
	}
	return ptr(s.v)
}

func (ps *podSum) add(c *statsapi.ContainerStats) {
	ps.n++
	if c.CPU != nil {
		ps.cpuAt = later(ps.cpuAt, c.CPU.Time.Time)
		ps.cpuTime.add(c.CPU.UsageCoreNanoSeconds)
		ps.nanoCores.add(c.CPU.UsageNanoCores)
	} else {
		ps.cpuTime.missing, ps.nanoCores.missing = true, true
	}
	if c.Memory != nil {
		ps.memAt = later(ps.memAt, c.Memory.Time.Time)
		ps.ws.add(c.Memory.WorkingSetBytes)
		ps.use.add(c.Memory.UsageBytes)
		ps.rs.add(c.Memory.RSSBytes)
	} else {
		ps.ws.missing, ps.use.missing, ps.rs.missing = true, true, true
	}
	for _, fs := range []*statsapi.FsStats{c.Rootfs, c.Logs} {
		if fs != nil {
			ps.diskBytes.add(fs.UsedBytes)
			ps.diskInodes.add(fs.InodesUsed)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// cpu is the pod's CPU as the sum over its containers (no containers: zero).
func (ps *podSum) cpu(now time.Time) *statsapi.CPUStats {
	if ps.n == 0 {
		return &statsapi.CPUStats{Time: metav1.NewTime(now), UsageCoreNanoSeconds: ptr(uint64(0)), UsageNanoCores: ptr(uint64(0))}
	}
	return &statsapi.CPUStats{Time: metav1.NewTime(ps.cpuAt), UsageCoreNanoSeconds: ps.cpuTime.ptr(ps.n), UsageNanoCores: ps.nanoCores.ptr(ps.n)}
}

// memory is the pod's memory as the sum over its containers (no containers: zero).
func (ps *podSum) memory(now time.Time) *statsapi.MemoryStats {
	if ps.n == 0 {
		zero := uint64(0)
		return &statsapi.MemoryStats{Time: metav1.NewTime(now), WorkingSetBytes: &zero, UsageBytes: ptr(zero), RSSBytes: ptr(zero)}
	}
	return &statsapi.MemoryStats{Time: metav1.NewTime(ps.memAt), WorkingSetBytes: ps.ws.ptr(ps.n), UsageBytes: ps.use.ptr(ps.n), RSSBytes: ps.rs.ptr(ps.n)}
}

// ephemeral is the pod's local ephemeral storage: writable layers and logs (emptyDir volumes
// are not counted), with nodefs's capacity.
func (ps *podSum) ephemeral(nodeFs *statsapi.FsStats, now time.Time) *statsapi.FsStats {
	out := &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr(ps.diskBytes.v), InodesUsed: ptr(ps.diskInodes.v)}
	withCapacity(out, nodeFs)
	return out
}
