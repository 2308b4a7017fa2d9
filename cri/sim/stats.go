package sim

import (
	"context"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Synthetic usage of a running container: a steady 1 millicore and 8 MiB.
const (
	simNanoCores     = 1_000_000
	simWorkingSet    = 8 << 20
	simRSS           = 4 << 20
	simWritableLayer = 4096
)

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
			matchLabels(f.GetLabelSelector(), c.labels)
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
		return sb.ready && (f.GetId() == "" || f.GetId() == sb.id) && matchLabels(f.GetLabelSelector(), sb.labels)
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

// stats are c's synthetic stats at now (Unix nanoseconds).
func (c *container) stats(now int64) *runtimeapi.ContainerStats {
	running := c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
	var cpuTime, nanoCores, ws, rss uint64
	if c.startedAt > 0 {
		end := now
		if !running {
			end = c.finishedAt
		}
		cpuTime = uint64(max(end-c.startedAt, 0)) / uint64(time.Second/simNanoCores)
	}
	if running {
		nanoCores, ws, rss = simNanoCores, simWorkingSet, simRSS
	}
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{
			Id:          c.id,
			Metadata:    cloneMsg(c.meta),
			Labels:      cloneMap(c.labels),
			Annotations: cloneMap(c.annotations),
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

// stats are sb's synthetic stats: the sums over its running containers.
func (sb *sandbox) stats(now int64) *runtimeapi.PodSandboxStats {
	var cpuTime, nanoCores, ws, rss, procs uint64
	var cs []*runtimeapi.ContainerStats
	for _, c := range sb.sortedContainers() {
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		s := c.stats(now)
		cs = append(cs, s)
		cpuTime += s.Cpu.UsageCoreNanoSeconds.Value
		nanoCores += s.Cpu.UsageNanoCores.Value
		ws += s.Memory.WorkingSetBytes.Value
		rss += s.Memory.RssBytes.Value
		procs++
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{
			Id:          sb.id,
			Metadata:    cloneMsg(sb.meta),
			Labels:      cloneMap(sb.labels),
			Annotations: cloneMap(sb.annotations),
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
