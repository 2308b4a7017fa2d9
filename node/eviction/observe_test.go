package eviction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestObserveSummary(t *testing.T) {
	n := node{
		memAvail: 1 * Gi, memWS: 3 * Gi,
		fsAvail: 20 * Gi, fsCap: 100 * Gi, fsIFree: 500, fsInodes: 1000,
		imgAvail: 5 * Gi, imgCap: 50 * Gi, imgIFree: 70, imgInodes: 100,
		maxPID: 4096, procs: 96, at: t0,
	}
	obs := ObserveSummary(mkSummary(n,
		usage{pod: "a", mem: 120 * Mi, disk: 2 * Gi, inodes: 42, procs: 7},
		usage{pod: "b", mem: 1 * Mi, disk: 3 * Mi, noEphStats: true}))

	want := map[Signal][2]string{
		SignalMemoryAvailable:   {"1Gi", "4Gi"},
		SignalNodeFsAvailable:   {"20Gi", "100Gi"},
		SignalNodeFsInodesFree:  {"500", "1k"},
		SignalImageFsAvailable:  {"5Gi", "50Gi"},
		SignalImageFsInodesFree: {"70", "100"},
		SignalPIDAvailable:      {"4k", "4096"},
	}
	if len(obs.Signals) != len(want) {
		t.Errorf("signals = %v", obs.Signals)
	}
	for s, w := range want {
		o, ok := obs.Signals[s]
		if !ok {
			t.Errorf("%s missing", s)
			continue
		}
		if o.Available.String() != w[0] || o.Capacity.String() != w[1] || !o.Time.Equal(t0) {
			t.Errorf("%s = %s/%s at %v, want %s/%s at %v", s, o.Available.String(), o.Capacity.String(), o.Time, w[0], w[1], t0)
		}
	}
	if got := obs.Signals[SignalPIDAvailable].Available; got.Value() != 4000 {
		t.Errorf("pid.available = %d, want 4000", got.Value())
	}

	a, ok := obs.Pods["uid-a"]
	if !ok {
		t.Fatalf("pod a missing: %v", obs.Pods)
	}
	for r, w := range map[corev1.ResourceName]string{
		corev1.ResourceMemory: "120Mi", corev1.ResourceEphemeralStorage: "2Gi", ResourceInodes: "42", ResourcePIDs: "7",
	} {
		if got := a.Of(r); got.String() != w {
			t.Errorf("pod a %s = %s, want %s", r, got.String(), w)
		}
	}
	if c := a.Containers["app"]; c.Memory.String() != "120Mi" || c.EphemeralStorage.String() != "2Gi" {
		t.Errorf("pod a container app = %+v", c)
	}
	// Without pod-level ephemeral stats, the containers' sum stands in.
	if got := obs.Pods["uid-b"].EphemeralStorage; got.String() != "3Mi" {
		t.Errorf("pod b ephemeral = %s, want 3Mi", got.String())
	}
}

func TestObserveSummaryPartial(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *statsv1alpha1.Summary
		want []Signal
	}{
		{"nil summary", nil, nil},
		{"empty summary", &statsv1alpha1.Summary{}, nil},
		{"memory without working set is left out", &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
			Memory: &statsv1alpha1.MemoryStats{AvailableBytes: u64(1)}}}, nil},
		{"fs bytes without inodes", &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
			Fs: &statsv1alpha1.FsStats{AvailableBytes: u64(1), CapacityBytes: u64(2)}}}, []Signal{SignalNodeFsAvailable}},
		{"runtime without imagefs", &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
			Runtime: &statsv1alpha1.RuntimeStats{}}}, nil},
		{"rlimit without curproc", &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{
			Rlimit: &statsv1alpha1.RlimitStats{MaxPID: new(int64)}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := ObserveSummary(tc.s)
			if obs.Signals == nil || obs.Pods == nil {
				t.Fatal("nil maps")
			}
			if len(obs.Signals) != len(tc.want) {
				t.Fatalf("signals = %v, want %v", obs.Signals, tc.want)
			}
			for _, s := range tc.want {
				if _, ok := obs.Signals[s]; !ok {
					t.Errorf("%s missing", s)
				}
			}
		})
	}
}
