package sim

import (
	"context"
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"weak"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Environment variables of a container that set its simulated resource
// use, read by stats (see usage). Runtime.SetUsage changes both while the
// container exists.
const (
	// EnvCPUMilliCores is the CPU the process uses, in millicores
	// (default 1): usage_nano_cores is this rate and
	// usage_core_nano_seconds grows by it on Options.Clock.
	EnvCPUMilliCores = "SIM_CPU_MILLICORES"
	// EnvMemoryBytes is the process's memory in bytes, reported as working
	// set, usage and RSS alike (default: working set and usage 8 MiB, RSS
	// 4 MiB).
	EnvMemoryBytes = "SIM_MEMORY_BYTES"
)

// Synthetic usage of a running container without EnvCPUMilliCores and
// EnvMemoryBytes: a steady 1 millicore and 8 MiB.
const (
	simMilliCores    = 1
	simWorkingSet    = 8 << 20
	simRSS           = 4 << 20
	simWritableLayer = 4096
	// maxMilliCores bounds EnvCPUMilliCores and SetUsage (a million cores).
	maxMilliCores = 1_000_000_000
)

// usage is a container's simulated resource use. Guarded by Runtime.mu.
//
// CPU time is the integral of the rate over the time the container ran:
// cpuBase nanoseconds were used before mark, and milliCores applies from
// max(mark, startedAt) until now (or finishedAt). SetUsage moves mark, so
// changing the rate never changes CPU time already reported.
type usage struct {
	milliCores  int64
	memoryBytes int64 // working set and usage
	rssBytes    int64
	cpuBase     uint64
	mark        int64 // Unix ns; 0 until SetUsage on a started container
}

func defaultUsage() usage {
	return usage{milliCores: simMilliCores, memoryBytes: simWorkingSet, rssBytes: simRSS}
}

// parseUsage reads EnvCPUMilliCores and EnvMemoryBytes; ok is false when
// neither is set. Errors are InvalidArgument.
func parseUsage(envs []*runtimeapi.KeyValue) (u usage, ok bool, err error) {
	u = defaultUsage()
	for _, kv := range envs {
		v := string(kv.GetValue())
		switch kv.GetKey() {
		case EnvCPUMilliCores:
			if u.milliCores, err = parseQuantity(kv.GetKey(), v, maxMilliCores); err != nil {
				return u, false, err
			}
			ok = true
		case EnvMemoryBytes:
			if u.memoryBytes, err = parseQuantity(kv.GetKey(), v, 1<<62); err != nil {
				return u, false, err
			}
			u.rssBytes = u.memoryBytes
			ok = true
		}
	}
	return u, ok, nil
}

func parseQuantity(key, v string, limit int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > limit {
		return 0, newErr(ErrInvalidArgument, "env %s=%q: want an integer in 0..%d", key, v, limit)
	}
	return n, nil
}

// usages holds the usage of containers that have one other than the
// default, beside the container rather than in it: keyed by a weak
// pointer, an entry goes away with its container. r.mu guards the values.
var usages sync.Map // weak.Pointer[container] -> *usage

// usageOf is c's usage (a copy). r.mu must be held.
func usageOf(c *container) usage {
	if u, ok := usages.Load(weak.Make(c)); ok {
		return *u.(*usage)
	}
	return defaultUsage()
}

// putUsage records u as c's usage. r.mu must be held.
func putUsage(c *container, u usage) {
	k := weak.Make(c)
	if _, loaded := usages.Swap(k, &u); !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[container]) { usages.Delete(k) }, k)
	}
}

// setUsageFromEnvLocked gives a new container the usage its env asks for
// (EnvCPUMilliCores, EnvMemoryBytes). CreateContainer calls it before the
// container becomes visible; an error is InvalidArgument and must fail
// the call. r.mu must be held.
func (r *Runtime) setUsageFromEnvLocked(c *container, envs []*runtimeapi.KeyValue) error {
	u, ok, err := parseUsage(envs)
	if err != nil || !ok {
		return err
	}
	putUsage(c, u)
	return nil
}

// SetUsage changes the CPU rate (millicores) and memory (bytes; working
// set, usage and RSS) that the container's stats report from now on, as
// if EnvCPUMilliCores and EnvMemoryBytes had said so; CPU time already
// used is kept. It works in-process only, in any state, and lasts until
// the container is removed.
//
// Errors: NotFound for an unknown container; InvalidArgument for a
// negative value or more than a million cores.
func (r *Runtime) SetUsage(containerID string, milliCores, memoryBytes int64) error {
	if milliCores < 0 || milliCores > maxMilliCores || memoryBytes < 0 {
		return newErr(ErrInvalidArgument, "SetUsage %q: want 0..%d millicores and non-negative bytes, got %d and %d",
			containerID, int64(maxMilliCores), milliCores, memoryBytes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[containerID]
	if !ok {
		return newErr(ErrNotFound, "SetUsage: container %q not found", containerID)
	}
	u := usageOf(c)
	if c.startedAt > 0 {
		at := r.now()
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			at = c.finishedAt
		}
		u.cpuBase, u.mark = u.cpuTime(c.startedAt, at), at
	}
	u.milliCores, u.memoryBytes, u.rssBytes = milliCores, memoryBytes, memoryBytes
	putUsage(c, u)
	return nil
}

// cpuTime is the CPU time in nanoseconds used by a process started at
// startedAt, at time end.
func (u usage) cpuTime(startedAt, end int64) uint64 {
	from := max(u.mark, startedAt)
	if end <= from {
		return u.cpuBase
	}
	// (end-from) ns × milliCores / 1000, without overflowing 64 bits.
	hi, lo := bits.Mul64(uint64(end-from), uint64(u.milliCores))
	if hi >= 1000 {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, 1000)
	return u.cpuBase + q
}

// writableLayersLocked sums the writable layers of all containers, which
// live on the image filesystem (FsId ImageFsMountpoint), as in
// containerd's snapshotter. r.mu must be held.
func (r *Runtime) writableLayersLocked() (bytes, inodes uint64) {
	n := uint64(len(r.containers))
	return n * simWritableLayer, n
}

// ContainerStats returns synthetic stats of a container; NotFound for an
// unknown ID.
func (r *Runtime) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	unlock, err := r.begin(ctx, "ContainerStats")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "ContainerStats: container %q not found", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatsResponse{Stats: c.stats(r.now())}, nil
}

// ListContainerStats returns synthetic stats of the running containers
// matching the filter (exact ID, sandbox ID, all label pairs).
func (r *Runtime) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	stats, err := r.listContainerStats(ctx, "ListContainerStats", req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: stats}, nil
}

// StreamContainerStats is ListContainerStats in chunks of at most 500.
func (r *Runtime) StreamContainerStats(req *runtimeapi.StreamContainerStatsRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamContainerStatsResponse]) error {
	stats, err := r.listContainerStats(stream.Context(), "StreamContainerStats", req.GetFilter())
	if err != nil {
		return err
	}
	return sendChunks(stats, func(c []*runtimeapi.ContainerStats) error {
		return stream.Send(&runtimeapi.StreamContainerStatsResponse{ContainerStats: c})
	})
}

func (r *Runtime) listContainerStats(ctx context.Context, method string, f *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	unlock, err := r.begin(ctx, method)
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := r.now()
	matched := r.matchContainersLocked(f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector(), func(c *container) bool {
		return c.state == runtimeapi.ContainerState_CONTAINER_RUNNING &&
			(f.GetId() == "" || f.GetId() == c.id) &&
			(f.GetPodSandboxId() == "" || f.GetPodSandboxId() == c.sb.id) &&
			c.labels.matches(f.GetLabelSelector())
	})
	out := make([]*runtimeapi.ContainerStats, len(matched))
	for i, c := range matched {
		out[i] = c.stats(now)
	}
	return out, nil
}

// PodSandboxStats returns synthetic stats of a sandbox and its running
// containers; NotFound for an unknown ID.
func (r *Runtime) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	unlock, err := r.begin(ctx, "PodSandboxStats")
	if err != nil {
		return nil, err
	}
	defer unlock()
	sb, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, newErr(ErrNotFound, "PodSandboxStats: sandbox %q not found", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: sb.stats(r.now())}, nil
}

// ListPodSandboxStats returns synthetic stats of the READY sandboxes
// matching the filter (exact ID, all label pairs).
func (r *Runtime) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	stats, err := r.listSandboxStats(ctx, "ListPodSandboxStats", req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: stats}, nil
}

// StreamPodSandboxStats is ListPodSandboxStats in chunks of at most 500.
func (r *Runtime) StreamPodSandboxStats(req *runtimeapi.StreamPodSandboxStatsRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxStatsResponse]) error {
	stats, err := r.listSandboxStats(stream.Context(), "StreamPodSandboxStats", req.GetFilter())
	if err != nil {
		return err
	}
	return sendChunks(stats, func(c []*runtimeapi.PodSandboxStats) error {
		return stream.Send(&runtimeapi.StreamPodSandboxStatsResponse{PodSandboxStats: c})
	})
}

func (r *Runtime) listSandboxStats(ctx context.Context, method string, f *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	unlock, err := r.begin(ctx, method)
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := r.now()
	matched := r.matchSandboxesLocked(f.GetId(), f.GetLabelSelector(), func(sb *sandbox) bool {
		return sb.ready && (f.GetId() == "" || f.GetId() == sb.id) && sb.labels.matches(f.GetLabelSelector())
	})
	out := make([]*runtimeapi.PodSandboxStats, len(matched))
	for i, sb := range matched {
		out[i] = sb.stats(now)
	}
	return out, nil
}

// ListMetricDescriptors describes no metrics: the simulator exports none.
func (r *Runtime) ListMetricDescriptors(ctx context.Context, _ *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	if err := r.wait(ctx, "ListMetricDescriptors"); err != nil {
		return nil, err
	}
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}

// ListPodSandboxMetrics returns no metrics (see ListMetricDescriptors).
func (r *Runtime) ListPodSandboxMetrics(ctx context.Context, _ *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	if err := r.wait(ctx, "ListPodSandboxMetrics"); err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

// StreamPodSandboxMetrics sends nothing and ends (see ListMetricDescriptors).
func (r *Runtime) StreamPodSandboxMetrics(_ *runtimeapi.StreamPodSandboxMetricsRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxMetricsResponse]) error {
	return r.wait(stream.Context(), "StreamPodSandboxMetrics")
}

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }

// stats are c's stats at now (Unix nanoseconds): its usage while it runs;
// after it exited only the CPU time it used.
func (c *container) stats(now int64) *runtimeapi.ContainerStats {
	u := usageOf(c)
	running := c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	var cpuTime, nanoCores, ws, rss uint64
	if c.startedAt > 0 {
		end := now
		if !running {
			end = c.finishedAt
		}
		cpuTime = u.cpuTime(c.startedAt, end)
	}
	if running {
		nanoCores, ws, rss = uint64(u.milliCores)*1_000_000, uint64(u.memoryBytes), uint64(u.rssBytes)
	}
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{
			Id:          c.id,
			Metadata:    c.metadata(),
			Labels:      c.labels.toMap(),
			Annotations: c.annotations.toMap(),
		},
		Cpu:    &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: u64(cpuTime), UsageNanoCores: u64(nanoCores)},
		Memory: &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: u64(ws), UsageBytes: u64(ws), RssBytes: u64(rss), PageFaults: u64(0), MajorPageFaults: u64(0)},
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp:  now,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
			UsedBytes:  u64(simWritableLayer),
			InodesUsed: u64(1),
		},
		Swap: &runtimeapi.SwapUsage{Timestamp: now, SwapAvailableBytes: u64(0), SwapUsageBytes: u64(0)},
		Io:   &runtimeapi.IoUsage{Timestamp: now},
	}
}

// stats are sb's synthetic stats, taken at now like the container stats
// they embed: CPU time is the sum over all its containers, running or
// exited (a pod cgroup keeps the CPU time of exited processes; that of
// removed containers leaves the sum); the rate, memory and process count
// are the sums over its running containers.
func (sb *sandbox) stats(now int64) *runtimeapi.PodSandboxStats {
	var cpuTime, nanoCores, ws, rss, procs uint64
	var cs []*runtimeapi.ContainerStats
	for _, c := range sb.sortedContainers() {
		s := c.stats(now)
		cpuTime += s.Cpu.UsageCoreNanoSeconds.Value
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		cs = append(cs, s)
		nanoCores += s.Cpu.UsageNanoCores.Value
		ws += s.Memory.WorkingSetBytes.Value
		rss += s.Memory.RssBytes.Value
		procs++
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{
			Id:          sb.id,
			Metadata:    sb.metadata(),
			Labels:      sb.labels.toMap(),
			Annotations: sb.annotations.toMap(),
		},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:    &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: u64(cpuTime), UsageNanoCores: u64(nanoCores)},
			Memory: &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: u64(ws), UsageBytes: u64(ws), RssBytes: u64(rss), PageFaults: u64(0), MajorPageFaults: u64(0)},
			Network: &runtimeapi.NetworkUsage{Timestamp: now, DefaultInterface: &runtimeapi.NetworkInterfaceUsage{
				Name: "eth0", RxBytes: u64(0), RxErrors: u64(0), TxBytes: u64(0), TxErrors: u64(0),
			}},
			Process:    &runtimeapi.ProcessUsage{Timestamp: now, ProcessCount: u64(procs)},
			Containers: cs,
			Io:         &runtimeapi.IoUsage{Timestamp: now},
		},
	}
}
