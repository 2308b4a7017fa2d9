package stats

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// Options configures a Provider.
type Options struct {
	// NodeName is the summary's node.nodeName. Required.
	NodeName string
	// RootDir is the directory whose filesystem is node.fs (the kubelet's root directory);
	// default "/".
	RootDir string
	// PodLogsDir is where container logs are, <PodLogsDir>/<namespace>_<name>_<uid>/<container>/
	// (the kubelet's /var/log/pods). Empty: containers have no logs stats and ephemeral
	// storage counts writable layers only.
	PodLogsDir string
	// FS reads the host; default HostFS{}.
	FS FS
	// Clock stamps figures the sources give no time for and ages the CPU samples; default the
	// real clock.
	Clock clock.PassiveClock
	// Logger receives debug records of optional figures that could not be read (they are
	// left out of the summary); default zap.NewNop().
	Logger *zap.Logger
}

// Provider builds stats summaries. It is safe for concurrent use; its only state is the
// last CPU sample of each container, pod and the node, from which usageNanoCores is computed
// when the runtime does not give it.
//
// A summary fails as a whole when the runtime's listing or stats calls fail, or the node's
// CPU or memory cannot be read; figures that are optional (node.fs, imageFs, rlimit, logs,
// capacities) are left nil when unavailable, and that is logged at debug level.
type Provider struct {
	rt    Runtime
	opts  Options
	rates *cpuRates
}

// New returns a Provider over rt. It does no I/O.
func New(rt Runtime, opts Options) (*Provider, error) {
	if rt == nil {
		return nil, errors.New("stats: a runtime is required")
	}
	if opts.NodeName == "" {
		return nil, errors.New("stats: a node name is required")
	}
	if opts.RootDir == "" {
		opts.RootDir = "/"
	}
	if opts.FS == nil {
		opts.FS = HostFS{}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Provider{rt: rt, opts: opts, rates: newCPURates()}, nil
}

// Get is Summary(ctx, false) (for eviction).
func (p *Provider) Get(ctx context.Context) (*statsapi.Summary, error) {
	return p.Summary(ctx, false)
}

// Summary returns the node's and its pods' stats now. With onlyCPUAndMemory (what
// metrics-server and /metrics/resource need) it skips the filesystem, rlimit, network and
// process figures and the runtime's ImageFsInfo.
func (p *Provider) Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error) {
	full := !onlyCPUAndMemory
	now := p.opts.Clock.Now()
	defer p.rates.prune(now)
	node, err := p.nodeStats(ctx, now, full)
	if err != nil {
		return nil, err
	}
	var fsi *fsContext
	if full {
		fsi = p.fsContext(ctx, now, node)
	}
	pods, err := p.podStats(ctx, now, fsi)
	if err != nil {
		return nil, err
	}
	return &statsapi.Summary{Node: node, Pods: pods}, nil
}

// nodeStats reads the host; with full also the filesystems and rlimit.
func (p *Provider) nodeStats(ctx context.Context, now time.Time, full bool) (statsapi.NodeStats, error) {
	f := p.opts.FS
	n := statsapi.NodeStats{NodeName: p.opts.NodeName}
	if boot, err := bootTime(ctx, f); err == nil {
		n.StartTime = metav1.NewTime(boot)
	} else {
		p.skipped("node start time", err)
	}
	cpu, err := hostCPU(ctx, f)
	if err != nil {
		return n, fmt.Errorf("stats: %w", err)
	}
	n.CPU = &statsapi.CPUStats{
		Time:                 metav1.NewTime(now),
		UsageCoreNanoSeconds: &cpu,
		UsageNanoCores:       p.rates.update("node", now, cpu, now),
	}
	mem, err := readHostMemory(ctx, f)
	if err != nil {
		return n, fmt.Errorf("stats: %w", err)
	}
	n.Memory = &statsapi.MemoryStats{
		Time:            metav1.NewTime(now),
		AvailableBytes:  ptr(mem.available()),
		UsageBytes:      ptr(mem.usage),
		WorkingSetBytes: ptr(mem.workingSet),
		RSSBytes:        ptr(mem.rss),
		PageFaults:      mem.pageFaults,
		MajorPageFaults: mem.majorPageFaults,
	}
	if !full {
		return n, nil
	}
	if fi, err := f.Statfs(ctx, p.opts.RootDir); err == nil {
		n.Fs = fsStats(now, fi)
	} else {
		p.skipped("node fs", err)
	}
	n.Runtime = &statsapi.RuntimeStats{ImageFs: p.imageFs(ctx, now)}
	maxPID, tasks, err := readRlimit(ctx, f)
	if err != nil {
		p.skipped("rlimit", err)
	}
	if maxPID != nil || tasks != nil {
		n.Rlimit = &statsapi.RlimitStats{Time: metav1.NewTime(now), MaxPID: maxPID, NumOfRunningProcesses: tasks}
	}
	return n, nil
}

// imageFs is the runtime's first image filesystem, with the capacity of its mountpoint when
// this host can statfs it; nil if ImageFsInfo fails.
func (p *Provider) imageFs(ctx context.Context, now time.Time) *statsapi.FsStats {
	resp, err := p.rt.ImageFsInfo(ctx)
	if err != nil || len(resp.GetImageFilesystems()) == 0 {
		p.skipped("image fs", err)
		return nil
	}
	u := resp.GetImageFilesystems()[0]
	out := &statsapi.FsStats{Time: metav1.NewTime(nanoTime(u.GetTimestamp(), now))}
	if v := u.GetUsedBytes(); v != nil {
		out.UsedBytes = ptr(v.GetValue())
	}
	if v := u.GetInodesUsed(); v != nil {
		out.InodesUsed = ptr(v.GetValue())
	}
	if mp := u.GetFsId().GetMountpoint(); mp != "" {
		if fi, err := p.opts.FS.Statfs(ctx, mp); err == nil {
			out.CapacityBytes, out.AvailableBytes = ptr(fi.CapacityBytes), ptr(fi.AvailableBytes)
			out.Inodes, out.InodesFree = ptr(fi.Inodes), ptr(fi.InodesFree)
		} else {
			p.skipped("image fs capacity of "+mp, err)
		}
	}
	return out
}

// fsStats is a whole filesystem.
func fsStats(now time.Time, fi FsInfo) *statsapi.FsStats {
	return &statsapi.FsStats{
		Time:           metav1.NewTime(now),
		AvailableBytes: ptr(fi.AvailableBytes),
		CapacityBytes:  ptr(fi.CapacityBytes),
		UsedBytes:      ptr(fi.UsedBytes),
		InodesFree:     ptr(fi.InodesFree),
		Inodes:         ptr(fi.Inodes),
		InodesUsed:     ptr(fi.Inodes - min(fi.InodesFree, fi.Inodes)),
	}
}

func (p *Provider) skipped(what string, err error) {
	if err != nil {
		p.opts.Logger.Debug("stats: figure left out", zap.String("figure", what), zap.Error(err))
	}
}

func ptr[T any](v T) *T { return &v }

// nanoTime is the CRI timestamp ns, or now when the runtime gave none.
func nanoTime(ns int64, now time.Time) time.Time {
	if ns <= 0 {
		return now
	}
	return time.Unix(0, ns)
}
