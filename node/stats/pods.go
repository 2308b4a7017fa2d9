package stats

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/cri"
)

// managed selects actorlet's sandboxes and containers.
var managed = map[string]string{cri.LabelManaged: cri.ManagedValue}

// fsContext is what a full summary adds to containers and pods: the filesystems their
// writable layers (the image filesystem) and logs (the logs directory's) are on, and nodefs.
type fsContext struct {
	imageFs, logsFs, nodeFs *statsapi.FsStats
}

// fsContext gathers the filesystems of a full summary from node (already read).
func (p *Provider) fsContext(ctx context.Context, now time.Time, node statsapi.NodeStats) *fsContext {
	c := &fsContext{nodeFs: node.Fs}
	if node.Runtime != nil {
		c.imageFs = node.Runtime.ImageFs
	}
	if p.opts.PodLogsDir != "" {
		if fi, err := p.opts.FS.Statfs(ctx, p.opts.PodLogsDir); err == nil {
			c.logsFs = fsStats(now, fi)
		} else {
			p.skipped("logs fs", err)
		}
	}
	return c
}

// podStats lists actorlet's pods in the runtime with their stats; fsi is nil unless the
// summary is full.
func (p *Provider) podStats(ctx context.Context, now time.Time, fsi *fsContext) ([]statsapi.PodStats, error) {
	sandboxes, err := p.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: managed})
	if err != nil {
		return nil, fmt.Errorf("stats: listing sandboxes: %w", err)
	}
	containers, err := p.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: managed})
	if err != nil {
		return nil, fmt.Errorf("stats: listing containers: %w", err)
	}
	// Stats by ID: the pod level from ListPodSandboxStats, containers from the sandbox stats,
	// or from ListContainerStats where the runtime does not serve sandbox stats.
	sbStats := make(map[string]*runtimeapi.PodSandboxStats)
	cStats := make(map[string]*runtimeapi.ContainerStats)
	list, err := p.rt.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{LabelSelector: managed})
	switch {
	case err == nil:
		for _, s := range list {
			sbStats[s.GetAttributes().GetId()] = s
			for _, c := range s.GetLinux().GetContainers() {
				cStats[c.GetAttributes().GetId()] = c
			}
		}
	default:
		// Not served (Unimplemented), or failing as a whole on one
		// sandbox (containerd cannot read a stopped sandbox's metrics):
		// the pod level is then the sum of its containers'.
		if cri.KindOf(err) != cri.Unimplemented {
			p.opts.Logger.Debug("sandbox stats failed; summing container stats", zap.Error(err))
		}
		cs, err := p.rt.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{LabelSelector: managed})
		if err != nil {
			return nil, fmt.Errorf("stats: listing container stats: %w", err)
		}
		for _, c := range cs {
			cStats[c.GetAttributes().GetId()] = c
		}
	}

	running := make(map[string][]*runtimeapi.Container) // by sandbox ID, oldest first
	for _, c := range containers {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			running[c.GetPodSandboxId()] = append(running[c.GetPodSandboxId()], c)
		}
	}
	out := make([]statsapi.PodStats, 0, len(sandboxes))
	for _, sb := range currentSandboxes(sandboxes) {
		cs := running[sb.GetId()]
		slices.SortFunc(cs, func(a, b *runtimeapi.Container) int {
			return cmp.Or(cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()), cmp.Compare(a.GetId(), b.GetId()))
		})
		out = append(out, p.pod(ctx, now, fsi, sb, sbStats[sb.GetId()], cs, cStats))
	}
	return out, nil
}

// currentSandboxes keeps the newest sandbox of each pod UID, preferring READY ones (a pod has
// one READY sandbox; older ones are dead attempts), in a stable order.
func currentSandboxes(all []*runtimeapi.PodSandbox) []*runtimeapi.PodSandbox {
	best := make(map[string]*runtimeapi.PodSandbox)
	for _, sb := range all {
		uid := podRef(sb).UID
		cur, ok := best[uid]
		if !ok || newer(sb, cur) {
			best[uid] = sb
		}
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(best))
	for _, sb := range best {
		out = append(out, sb)
	}
	slices.SortFunc(out, func(a, b *runtimeapi.PodSandbox) int {
		ra, rb := podRef(a), podRef(b)
		return cmp.Or(cmp.Compare(ra.Namespace, rb.Namespace), cmp.Compare(ra.Name, rb.Name), cmp.Compare(ra.UID, rb.UID))
	})
	return out
}

// newer reports whether a should be reported rather than b.
func newer(a, b *runtimeapi.PodSandbox) bool {
	ar := a.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	br := b.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	if ar != br {
		return ar
	}
	return cmp.Or(cmp.Compare(a.GetCreatedAt(), b.GetCreatedAt()), cmp.Compare(a.GetId(), b.GetId())) > 0
}

// podRef names the sandbox's pod from its metadata, else its labels.
func podRef(sb *runtimeapi.PodSandbox) statsapi.PodReference {
	m, l := sb.GetMetadata(), sb.GetLabels()
	return statsapi.PodReference{
		Name:      cmp.Or(m.GetName(), l[cri.LabelPodName]),
		Namespace: cmp.Or(m.GetNamespace(), l[cri.LabelPodNamespace]),
		UID:       cmp.Or(m.GetUid(), l[cri.LabelPodUID]),
	}
}

// pod builds one pod's stats. sbs is nil where the runtime has no sandbox stats: the pod's
// CPU and memory are then the sums over its containers.
func (p *Provider) pod(ctx context.Context, now time.Time, fsi *fsContext, sb *runtimeapi.PodSandbox,
	sbs *runtimeapi.PodSandboxStats, containers []*runtimeapi.Container, cStats map[string]*runtimeapi.ContainerStats,
) statsapi.PodStats {
	ps := statsapi.PodStats{
		PodRef:     podRef(sb),
		StartTime:  metav1.NewTime(time.Unix(0, sb.GetCreatedAt())),
		Containers: []statsapi.ContainerStats{},
	}
	var sum podSum
	for _, c := range containers {
		s := cStats[c.GetId()]
		if s == nil { // started after the stats were taken
			continue
		}
		cs := statsapi.ContainerStats{
			Name:      cmp.Or(c.GetMetadata().GetName(), c.GetLabels()[cri.LabelContainerName]),
			StartTime: metav1.NewTime(time.Unix(0, c.GetCreatedAt())),
			CPU:       p.cpu("container/"+c.GetId(), s.GetCpu(), now),
			Memory:    memory(s.GetMemory(), now),
		}
		if fsi != nil {
			cs.Rootfs = layerStats(s.GetWritableLayer(), fsi.imageFs, now)
			cs.Logs = p.logStats(ctx, now, fsi.logsFs, ps.PodRef, cs.Name)
		}
		sum.add(&cs)
		ps.Containers = append(ps.Containers, cs)
	}
	if l := sbs.GetLinux(); l != nil && l.GetCpu() != nil {
		ps.CPU = p.cpu("pod/"+sb.GetId(), l.GetCpu(), now)
	} else {
		ps.CPU = sum.cpu(now)
	}
	if l := sbs.GetLinux(); l != nil && l.GetMemory() != nil {
		ps.Memory = memory(l.GetMemory(), now)
	} else {
		ps.Memory = sum.memory(now)
	}
	if fsi == nil {
		return ps
	}
	ps.EphemeralStorage = sum.ephemeral(fsi.nodeFs, now)
	if l := sbs.GetLinux(); l != nil {
		ps.Network = network(l.GetNetwork())
		if pc := l.GetProcess().GetProcessCount(); pc != nil {
			ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr(pc.GetValue())}
		}
	}
	return ps
}

// cpu converts CRI CPU usage, computing usageNanoCores from the last sample of key when the
// runtime gives none.
func (p *Provider) cpu(key string, u *runtimeapi.CpuUsage, now time.Time) *statsapi.CPUStats {
	if u == nil {
		return nil
	}
	at := nanoTime(u.GetTimestamp(), now)
	out := &statsapi.CPUStats{Time: metav1.NewTime(at)}
	if v := u.GetUsageCoreNanoSeconds(); v != nil {
		out.UsageCoreNanoSeconds = ptr(v.GetValue())
		out.UsageNanoCores = p.rates.update(key, at, v.GetValue(), now)
	}
	if v := u.GetUsageNanoCores(); v.GetValue() != 0 {
		out.UsageNanoCores = ptr(v.GetValue())
	}
	return out
}

// memory converts CRI memory usage.
func memory(u *runtimeapi.MemoryUsage, now time.Time) *statsapi.MemoryStats {
	if u == nil {
		return nil
	}
	out := &statsapi.MemoryStats{Time: metav1.NewTime(nanoTime(u.GetTimestamp(), now))}
	for _, f := range []struct {
		from *runtimeapi.UInt64Value
		to   **uint64
	}{
		{u.GetWorkingSetBytes(), &out.WorkingSetBytes},
		{u.GetUsageBytes(), &out.UsageBytes},
		{u.GetRssBytes(), &out.RSSBytes},
		{u.GetAvailableBytes(), &out.AvailableBytes},
		{u.GetPageFaults(), &out.PageFaults},
		{u.GetMajorPageFaults(), &out.MajorPageFaults},
	} {
		if f.from != nil {
			*f.to = ptr(f.from.GetValue())
		}
	}
	return out
}

// layerStats is a container's writable layer on the image filesystem.
func layerStats(u *runtimeapi.FilesystemUsage, imageFs *statsapi.FsStats, now time.Time) *statsapi.FsStats {
	if u == nil {
		return nil
	}
	out := &statsapi.FsStats{Time: metav1.NewTime(nanoTime(u.GetTimestamp(), now))}
	if v := u.GetUsedBytes(); v != nil {
		out.UsedBytes = ptr(v.GetValue())
	}
	if v := u.GetInodesUsed(); v != nil {
		out.InodesUsed = ptr(v.GetValue())
	}
	withCapacity(out, imageFs)
	return out
}

// logStats is the size of a container's log directory on the logs filesystem; nil when logs
// are not configured or cannot be read.
func (p *Provider) logStats(ctx context.Context, now time.Time, logsFs *statsapi.FsStats, pod statsapi.PodReference, container string) *statsapi.FsStats {
	if p.opts.PodLogsDir == "" {
		return nil
	}
	dir := filepath.Join(p.opts.PodLogsDir, pod.Namespace+"_"+pod.Name+"_"+pod.UID, container)
	b, n, err := p.opts.FS.DiskUsage(ctx, dir)
	if err != nil {
		if !isNotExist(err) {
			p.skipped("logs of "+dir, err)
		}
		return nil
	}
	out := &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: &b, InodesUsed: &n}
	withCapacity(out, logsFs)
	return out
}

// withCapacity copies the size of the filesystem fs holds into out.
func withCapacity(out, fs *statsapi.FsStats) {
	if fs == nil {
		return
	}
	out.AvailableBytes, out.CapacityBytes = clone(fs.AvailableBytes), clone(fs.CapacityBytes)
	out.InodesFree, out.Inodes = clone(fs.InodesFree), clone(fs.Inodes)
}

// network converts the sandbox's network usage: the default interface and all others.
func network(u *runtimeapi.NetworkUsage) *statsapi.NetworkStats {
	if u == nil || u.GetDefaultInterface() == nil {
		return nil
	}
	out := &statsapi.NetworkStats{Time: metav1.NewTime(time.Unix(0, u.GetTimestamp())), InterfaceStats: iface(u.GetDefaultInterface())}
	for _, i := range u.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, iface(i))
	}
	return out
}

func iface(i *runtimeapi.NetworkInterfaceUsage) statsapi.InterfaceStats {
	val := func(v *runtimeapi.UInt64Value) *uint64 {
		if v == nil {
			return nil
		}
		return ptr(v.GetValue())
	}
	return statsapi.InterfaceStats{Name: i.GetName(), RxBytes: val(i.GetRxBytes()), RxErrors: val(i.GetRxErrors()),
		TxBytes: val(i.GetTxBytes()), TxErrors: val(i.GetTxErrors())}
}
