package eviction

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	Ki = int64(1) << 10
	Mi = int64(1) << 20
	Gi = int64(1) << 30
)

// podSpec describes a test pod: one container "app" (unless noContainer).
type podSpec struct {
	name           string
	memReq, memLim string // "" for none
	diskReq        string
	priority       *int32
	grace          *int64
	annotations    map[string]string
	phase          corev1.PodPhase
}

func mkPod(s podSpec) *corev1.Pod {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	if s.memReq != "" {
		res.Requests[corev1.ResourceMemory] = resource.MustParse(s.memReq)
	}
	if s.memLim != "" {
		res.Limits[corev1.ResourceMemory] = resource.MustParse(s.memLim)
	}
	if s.diskReq != "" {
		res.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse(s.diskReq)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: "default", UID: types.UID("uid-" + s.name), Annotations: s.annotations},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "app", Resources: res}},
			Priority:                      s.priority,
			TerminationGracePeriodSeconds: s.grace,
		},
		Status: corev1.PodStatus{Phase: s.phase},
	}
}

func names(es []Eviction) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Pod.Name)
	}
	return out
}

// usage is a pod's usage in a test summary.
type usage struct {
	pod        string
	mem        int64
	disk       int64
	inodes     int64
	procs      int64
	noEphStats bool // leave EphemeralStorage out (fall back to containers)
}

// node is the node part of a test summary; negative values leave a
// signal out.
type node struct {
	memAvail, memWS     int64
	fsAvail, fsCap      int64
	fsIFree, fsInodes   int64
	imgAvail, imgCap    int64
	imgIFree, imgInodes int64
	maxPID, procs       int64
	at                  time.Time
}

func u64(n int64) *uint64 { v := uint64(n); return &v }

func mkSummary(n node, pods ...usage) *statsv1alpha1.Summary {
	at := metav1.NewTime(n.at)
	s := &statsv1alpha1.Summary{}
	if n.memAvail >= 0 {
		s.Node.Memory = &statsv1alpha1.MemoryStats{Time: at, AvailableBytes: u64(n.memAvail), WorkingSetBytes: u64(n.memWS)}
	}
	if n.fsCap > 0 {
		s.Node.Fs = &statsv1alpha1.FsStats{Time: at, AvailableBytes: u64(n.fsAvail), CapacityBytes: u64(n.fsCap),
			InodesFree: u64(n.fsIFree), Inodes: u64(n.fsInodes)}
	}
	if n.imgCap > 0 {
		s.Node.Runtime = &statsv1alpha1.RuntimeStats{ImageFs: &statsv1alpha1.FsStats{Time: at,
			AvailableBytes: u64(n.imgAvail), CapacityBytes: u64(n.imgCap), InodesFree: u64(n.imgIFree), Inodes: u64(n.imgInodes)}}
	}
	if n.maxPID > 0 {
		s.Node.Rlimit = &statsv1alpha1.RlimitStats{Time: at, MaxPID: ptr.To(n.maxPID), NumOfRunningProcesses: ptr.To(n.procs)}
	}
	for _, p := range pods {
		ps := statsv1alpha1.PodStats{
			PodRef: statsv1alpha1.PodReference{Name: p.pod, Namespace: "default", UID: "uid-" + p.pod},
			Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u64(p.mem)},
			Containers: []statsv1alpha1.ContainerStats{{
				Name:   "app",
				Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u64(p.mem)},
				Rootfs: &statsv1alpha1.FsStats{Time: at, UsedBytes: u64(p.disk)},
				Logs:   &statsv1alpha1.FsStats{Time: at, UsedBytes: u64(0)},
			}},
			ProcessStats: &statsv1alpha1.ProcessStats{ProcessCount: u64(p.procs)},
		}
		if !p.noEphStats {
			ps.EphemeralStorage = &statsv1alpha1.FsStats{Time: at, UsedBytes: u64(p.disk), InodesUsed: u64(p.inodes)}
		}
		s.Pods = append(s.Pods, ps)
	}
	return s
}

// plenty is a node with no pressure at t0.
func plenty() node {
	return node{
		memAvail: 4 * Gi, memWS: 4 * Gi,
		fsAvail: 50 * Gi, fsCap: 100 * Gi, fsIFree: 900_000, fsInodes: 1_000_000,
		imgAvail: 50 * Gi, imgCap: 100 * Gi, imgIFree: 900_000, imgInodes: 1_000_000,
		maxPID: 10_000, procs: 100,
		at: t0,
	}
}

func resource_(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.BinarySI) }
