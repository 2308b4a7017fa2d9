package eviction

import (
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func mustConfig(t *testing.T, kc *kubeletconfigv1beta1.KubeletConfiguration) Config {
	t.Helper()
	cfg, err := ParseConfig(kc)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

func hardOnly(entries map[string]string) *kubeletconfigv1beta1.KubeletConfiguration {
	return &kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: entries}
}

// TestRanking checks the order of eviction candidates for each kind of
// signal.
func TestRanking(t *testing.T) {
	lowMem := plenty()
	lowMem.memAvail = 50 * Mi
	lowDisk := plenty()
	lowDisk.fsAvail = 1 * Gi
	lowPID := plenty()
	lowPID.procs = 9_990

	for _, tc := range []struct {
		name   string
		node   node
		pods   []podSpec
		usages []usage
		want   []string
	}{{
		name:   "memory: BestEffort over its request before Burstable within requests",
		node:   lowMem,
		pods:   []podSpec{{name: "burstable", memReq: "1Gi"}, {name: "besteffort"}},
		usages: []usage{{pod: "burstable", mem: 500 * Mi}, {pod: "besteffort", mem: 50 * Mi}},
		want:   []string{"besteffort", "burstable"},
	}, {
		name:   "memory: over its request first even at a higher priority",
		node:   lowMem,
		pods:   []podSpec{{name: "within-low", memReq: "1Gi", priority: ptr.To[int32](0)}, {name: "over-high", priority: ptr.To[int32](1000)}},
		usages: []usage{{pod: "within-low", mem: 900 * Mi}, {pod: "over-high", mem: 10 * Mi}},
		want:   []string{"over-high", "within-low"},
	}, {
		name:   "memory: lower priority first among pods over requests",
		node:   lowMem,
		pods:   []podSpec{{name: "high", priority: ptr.To[int32](1000)}, {name: "low", priority: ptr.To[int32](0)}},
		usages: []usage{{pod: "high", mem: 900 * Mi}, {pod: "low", mem: 10 * Mi}},
		want:   []string{"low", "high"},
	}, {
		name: "memory: then larger usage above request first",
		node: lowMem,
		pods: []podSpec{{name: "small"}, {name: "burst", memReq: "100Mi"}, {name: "big"}},
		usages: []usage{{pod: "small", mem: 100 * Mi}, {pod: "burst", mem: 350 * Mi},
			{pod: "big", mem: 300 * Mi}},
		want: []string{"big", "burst", "small"},
	}, {
		name:   "memory: a pod without stats comes first",
		node:   lowMem,
		pods:   []podSpec{{name: "hog"}, {name: "nostats", memReq: "1Gi"}},
		usages: []usage{{pod: "hog", mem: 3 * Gi}},
		want:   []string{"nostats", "hog"},
	}, {
		name: "critical, static, mirror and terminal pods are never candidates",
		node: lowMem,
		pods: []podSpec{
			{name: "critical", priority: ptr.To(SystemCriticalPriority)},
			{name: "static", annotations: map[string]string{"kubernetes.io/config.source": "file"}},
			{name: "mirror", annotations: map[string]string{"kubernetes.io/config.mirror": "abc"}},
			{name: "done", phase: corev1.PodSucceeded},
			{name: "failed", phase: corev1.PodFailed},
			{name: "api", annotations: map[string]string{"kubernetes.io/config.source": "api"}},
		},
		usages: []usage{{pod: "critical", mem: 3 * Gi}, {pod: "static", mem: 3 * Gi}, {pod: "mirror", mem: 3 * Gi},
			{pod: "done", mem: 3 * Gi}, {pod: "failed", mem: 3 * Gi}, {pod: "api", mem: 1 * Mi}},
		want: []string{"api"},
	}, {
		name: "only critical pods: nothing to evict",
		node: lowMem,
		pods: []podSpec{{name: "critical", priority: ptr.To[int32](2_000_001_000)}},
		want: nil,
	}, {
		name: "disk: over ephemeral-storage request first, then priority, then usage",
		node: lowDisk,
		pods: []podSpec{
			{name: "within", diskReq: "10Gi"},
			{name: "over-high", diskReq: "1Gi", priority: ptr.To[int32](100)},
			{name: "over-small"},
			{name: "over-big"},
		},
		usages: []usage{{pod: "within", disk: 9 * Gi}, {pod: "over-high", disk: 5 * Gi},
			{pod: "over-small", disk: 1 * Gi}, {pod: "over-big", disk: 2 * Gi}},
		want: []string{"over-big", "over-small", "over-high", "within"},
	}, {
		name: "pid: priority first, then most processes",
		node: lowPID,
		pods: []podSpec{{name: "many-high", priority: ptr.To[int32](10)}, {name: "few"}, {name: "many"}},
		usages: []usage{{pod: "many-high", procs: 5000}, {pod: "few", procs: 10},
			{pod: "many", procs: 3000}},
		want: []string{"many", "few", "many-high"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []*corev1.Pod
			for _, p := range tc.pods {
				pods = append(pods, mkPod(p))
			}
			d := Decide(Input{
				Config:       mustConfig(t, hardOnly(map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "1%"})),
				Observations: ObserveSummary(mkSummary(tc.node, tc.usages...)),
				Pods:         pods,
				Now:          t0,
			})
			if d.Starved == nil {
				t.Fatal("no threshold to act on")
			}
			if got := names(d.Candidates); !slices.Equal(got, tc.want) {
				t.Errorf("candidates = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEvictionMessage(t *testing.T) {
	n := plenty()
	n.memAvail = 50 * Mi
	d := Decide(Input{
		Config:       mustConfig(t, nil),
		Observations: ObserveSummary(mkSummary(n, usage{pod: "hog", mem: 120 * Mi}, usage{pod: "fit", mem: 10 * Mi})),
		Pods:         []*corev1.Pod{mkPod(podSpec{name: "hog"}), mkPod(podSpec{name: "fit", memReq: "64Mi"})},
		Now:          t0,
	})
	if len(d.Candidates) != 2 {
		t.Fatalf("candidates = %v", names(d.Candidates))
	}
	want := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. " +
		"Container app was using 120Mi, request is 0, has larger consumption of memory."
	if e := d.Candidates[0]; e.Message != want || e.Reason != "Evicted" || e.GracePeriod != 0 || e.Signal != SignalMemoryAvailable {
		t.Errorf("eviction = %q %q grace %v signal %s\nwant message %q", e.Reason, e.Message, e.GracePeriod, e.Signal, want)
	}
	// A pod within its request names no container.
	want = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi."
	if got := d.Candidates[1].Message; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

// step is one pass of a Decide sequence.
type step struct {
	at          time.Duration // since t0; also the observation time
	memAvail    int64
	wantPress   bool // MemoryPressure
	wantStarved bool
	wantFirst   string
}

func runSteps(t *testing.T, cfg Config, pods []*corev1.Pod, steps []step) {
	t.Helper()
	var st State
	for i, s := range steps {
		n := plenty()
		n.memAvail, n.at = s.memAvail, t0.Add(s.at)
		d := Decide(Input{Config: cfg, State: st, Observations: ObserveSummary(mkSummary(n, usage{pod: "a", mem: 200 * Mi}, usage{pod: "b", mem: 100 * Mi})),
			Pods: pods, Now: t0.Add(s.at)})
		st = d.State
		press := slices.Contains(d.Pressure, corev1.NodeMemoryPressure)
		if press != s.wantPress {
			t.Errorf("step %d (+%v): MemoryPressure = %v, want %v", i, s.at, press, s.wantPress)
		}
		taint := slices.ContainsFunc(d.Taints(), func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeMemoryPressure && t.Effect == corev1.TaintEffectNoSchedule
		})
		if taint != s.wantPress {
			t.Errorf("step %d (+%v): memory-pressure taint = %v, want %v", i, s.at, taint, s.wantPress)
		}
		if (d.Starved != nil) != s.wantStarved {
			t.Errorf("step %d (+%v): starved = %v, want %v", i, s.at, d.Starved, s.wantStarved)
		}
		if s.wantFirst != "" && (len(d.Candidates) == 0 || d.Candidates[0].Pod.Name != s.wantFirst) {
			t.Errorf("step %d (+%v): candidates = %v, want %s first", i, s.at, names(d.Candidates), s.wantFirst)
		}
		if !s.wantStarved && len(d.Candidates) != 0 {
			t.Errorf("step %d (+%v): candidates %v without a starved threshold", i, s.at, names(d.Candidates))
		}
	}
}

func TestMemoryPressureTransition(t *testing.T) {
	cfg := mustConfig(t, nil) // memory.available<100Mi, transition 5m
	pods := []*corev1.Pod{mkPod(podSpec{name: "a", memReq: "1Gi"}), mkPod(podSpec{name: "b"})}
	runSteps(t, cfg, pods, []step{
		{at: 0, memAvail: 1 * Gi},
		{at: 10 * time.Second, memAvail: 50 * Mi, wantPress: true, wantStarved: true, wantFirst: "b"},
		{at: 20 * time.Second, memAvail: 60 * Mi, wantPress: true, wantStarved: true, wantFirst: "b"},
		{at: 30 * time.Second, memAvail: 1 * Gi, wantPress: true},                                 // relieved; condition held
		{at: 20*time.Second + 5*time.Minute - time.Nanosecond, memAvail: 1 * Gi, wantPress: true}, // just inside the period
		{at: 20*time.Second + 5*time.Minute, memAvail: 1 * Gi},                                    // period over
	})
}

func TestSoftThreshold(t *testing.T) {
	cfg := mustConfig(t, &kubeletconfigv1beta1.KubeletConfiguration{
		EvictionHard:              map[string]string{"memory.available": "100Mi"},
		EvictionSoft:              map[string]string{"memory.available": "1Gi"},
		EvictionSoftGracePeriod:   map[string]string{"memory.available": "1m"},
		EvictionMaxPodGracePeriod: 30,
	})
	pods := []*corev1.Pod{mkPod(podSpec{name: "a", grace: ptr.To[int64](10)}), mkPod(podSpec{name: "b"})}
	runSteps(t, cfg, pods, []step{
		{at: 0, memAvail: 500 * Mi, wantPress: true},                // met: pressure at once, eviction waits
		{at: 30 * time.Second, memAvail: 2 * Gi, wantPress: true},   // not met: grace restarts
		{at: 40 * time.Second, memAvail: 500 * Mi, wantPress: true}, // met again from +40s
		{at: 90 * time.Second, memAvail: 500 * Mi, wantPress: true}, // 50s < 1m
		{at: 100 * time.Second, memAvail: 500 * Mi, wantPress: true, wantStarved: true, wantFirst: "a"},
	})

	// Grace periods: soft evictions cap the pod's own at 30s; hard are 0.
	n := plenty()
	n.memAvail = 500 * Mi
	var st State
	for _, at := range []time.Duration{0, time.Minute} {
		d := Decide(Input{Config: cfg, State: st, Observations: ObserveSummary(mkSummary(plentyAt(n, at))), Now: t0.Add(at),
			Pods: []*corev1.Pod{
				mkPod(podSpec{name: "short", grace: ptr.To[int64](10)}),
				mkPod(podSpec{name: "long", grace: ptr.To[int64](600)}),
				mkPod(podSpec{name: "unset"}),
			}})
		st = d.State
		if at == 0 {
			continue
		}
		got := map[string]time.Duration{}
		for _, e := range d.Candidates {
			got[e.Pod.Name] = e.GracePeriod
		}
		want := map[string]time.Duration{"short": 10 * time.Second, "long": 30 * time.Second, "unset": 30 * time.Second}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("soft grace periods = %v, want %v", got, want)
		}
	}
	n.memAvail = 50 * Mi
	d := Decide(Input{Config: cfg, State: st, Observations: ObserveSummary(mkSummary(plentyAt(n, 2*time.Minute))), Now: t0.Add(2 * time.Minute),
		Pods: []*corev1.Pod{mkPod(podSpec{name: "long", grace: ptr.To[int64](600)})}})
	if d.Starved == nil || d.Starved.Soft || len(d.Candidates) != 1 || d.Candidates[0].GracePeriod != 0 {
		t.Errorf("hard eviction: starved %v candidates %+v", d.Starved, d.Candidates)
	}
}

func plentyAt(n node, at time.Duration) node { n.at = t0.Add(at); return n }

func TestMinimumReclaim(t *testing.T) {
	cfg := mustConfig(t, &kubeletconfigv1beta1.KubeletConfiguration{
		EvictionHard:           map[string]string{"memory.available": "100Mi"},
		EvictionMinimumReclaim: map[string]string{"memory.available": "200Mi"},
	})
	pods := []*corev1.Pod{mkPod(podSpec{name: "a"})}
	runSteps(t, cfg, pods, []step{
		{at: 0, memAvail: 150 * Mi, wantPress: false}, // above 100Mi, never acted
		{at: 10 * time.Second, memAvail: 50 * Mi, wantPress: true, wantStarved: true},
		{at: 20 * time.Second, memAvail: 250 * Mi, wantPress: true, wantStarved: true}, // < 100Mi+200Mi
		{at: 30 * time.Second, memAvail: 301 * Mi, wantPress: true},                    // reclaimed
		{at: 40 * time.Second, memAvail: 250 * Mi, wantPress: true},                    // no longer acting
	})
}

func TestStaleStatsDoNotEvictTwice(t *testing.T) {
	cfg := mustConfig(t, nil)
	n := plenty()
	n.memAvail = 50 * Mi
	obs := ObserveSummary(mkSummary(n, usage{pod: "a", mem: Gi}))
	pods := []*corev1.Pod{mkPod(podSpec{name: "a"})}
	d1 := Decide(Input{Config: cfg, Observations: obs, Pods: pods, Now: t0})
	d2 := Decide(Input{Config: cfg, State: d1.State, Observations: obs, Pods: pods, Now: t0.Add(10 * time.Second)})
	if d1.Starved == nil || len(d1.Candidates) != 1 {
		t.Fatalf("first pass: starved %v candidates %v", d1.Starved, names(d1.Candidates))
	}
	if d2.Starved != nil || len(d2.Candidates) != 0 || !slices.Contains(d2.Pressure, corev1.NodeMemoryPressure) {
		t.Errorf("second pass on the same stats: starved %v candidates %v pressure %v", d2.Starved, names(d2.Candidates), d2.Pressure)
	}
}

func TestDiskSignalsReclaimFirst(t *testing.T) {
	cfg := mustConfig(t, nil)
	for _, tc := range []struct {
		name        string
		mod         func(*node)
		wantSignal  Signal
		wantReclaim bool
		wantPress   []corev1.NodeConditionType
	}{
		{"nodefs space", func(n *node) { n.fsAvail = 5 * Gi }, SignalNodeFsAvailable, true, []corev1.NodeConditionType{corev1.NodeDiskPressure}},
		{"nodefs inodes", func(n *node) { n.fsIFree = 100 }, SignalNodeFsInodesFree, true, []corev1.NodeConditionType{corev1.NodeDiskPressure}},
		{"imagefs space", func(n *node) { n.imgAvail = 10 * Gi }, SignalImageFsAvailable, true, []corev1.NodeConditionType{corev1.NodeDiskPressure}},
		{"memory before disk", func(n *node) { n.fsAvail = 5 * Gi; n.memAvail = Mi }, SignalMemoryAvailable, false,
			[]corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := plenty()
			tc.mod(&n)
			d := Decide(Input{Config: cfg, Observations: ObserveSummary(mkSummary(n, usage{pod: "a", disk: Gi})),
				Pods: []*corev1.Pod{mkPod(podSpec{name: "a"})}, Now: t0})
			if d.Starved == nil || d.Starved.Signal != tc.wantSignal || d.Reclaim != tc.wantReclaim {
				t.Fatalf("starved %v reclaim %v, want %s %v", d.Starved, d.Reclaim, tc.wantSignal, tc.wantReclaim)
			}
			if !slices.Equal(d.Pressure, tc.wantPress) {
				t.Errorf("pressure = %v, want %v", d.Pressure, tc.wantPress)
			}
			if len(d.Candidates) != 1 {
				t.Errorf("candidates = %v", names(d.Candidates))
			}
			after := plenty()
			if !Resolved(d.Met, ObserveSummary(mkSummary(after))) {
				t.Error("Resolved = false on a relieved node")
			}
			if Resolved(d.Met, ObserveSummary(mkSummary(n))) {
				t.Error("Resolved = true on the same pressure")
			}
		})
	}
}

func TestDecideKeepsInputState(t *testing.T) {
	cfg := mustConfig(t, nil)
	n := plenty()
	n.memAvail = 50 * Mi
	prev := State{
		FirstMet:          map[Key]time.Time{{Signal: SignalNodeFsAvailable}: t0},
		ConditionLastSeen: map[corev1.NodeConditionType]time.Time{corev1.NodeDiskPressure: t0},
		Acting:            map[Key]bool{{Signal: SignalNodeFsAvailable}: true},
		ObservedAt:        map[Signal]time.Time{SignalNodeFsAvailable: t0},
	}
	d := Decide(Input{Config: cfg, State: prev, Observations: ObserveSummary(mkSummary(plentyAt(n, time.Second))), Now: t0.Add(time.Second)})
	if len(prev.FirstMet) != 1 || len(prev.Acting) != 1 || !prev.ObservedAt[SignalNodeFsAvailable].Equal(t0) {
		t.Errorf("Decide modified its input state: %+v", prev)
	}
	if _, ok := d.State.FirstMet[Key{Signal: SignalNodeFsAvailable}]; ok {
		t.Error("a threshold no longer met kept its FirstMet")
	}
	if !slices.Equal(d.Pressure, []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure}) {
		t.Errorf("pressure = %v (DiskPressure should hold through the transition period)", d.Pressure)
	}
}
