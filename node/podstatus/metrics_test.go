package podstatus

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
)

var gaugeNames = []string{RunningPodsName, RunningContainersName, PodsByPhaseName}

func expectGauges(t *testing.T, reg prometheus.Gatherer, runningPods int, containers [4]int, byPhase map[string]int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# HELP kubelet_running_pods Number of pods that have a ready pod sandbox (condition PodReadyToStartContainers is True).\n")
	b.WriteString("# TYPE kubelet_running_pods gauge\n")
	b.WriteString("kubelet_running_pods " + strconv.Itoa(runningPods) + "\n")
	b.WriteString("# HELP kubelet_running_containers Number of containers of the node's pods, by container state.\n")
	b.WriteString("# TYPE kubelet_running_containers gauge\n")
	for i, st := range []string{"running", "exited", "created", "unknown"} {
		b.WriteString(`kubelet_running_containers{container_state="` + st + `"} ` + strconv.Itoa(containers[i]) + "\n")
	}
	b.WriteString("# HELP actorlet_pods Number of the node's pods, by pod phase.\n")
	b.WriteString("# TYPE actorlet_pods gauge\n")
	for _, ph := range []string{"Pending", "Running", "Succeeded", "Failed", "Unknown"} {
		b.WriteString(`actorlet_pods{phase="` + ph + `"} ` + strconv.Itoa(byPhase[ph]) + "\n")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()), gaugeNames...); err != nil {
		t.Fatal(err)
	}
}

func TestGauges(t *testing.T) {
	c, reg, _ := newTestCache(t)
	expectGauges(t, reg, 0, [4]int{}, nil)

	// a: sandbox ready, two running, one init exited.
	a := withSandboxReady(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), running("c1"), running("c2")), true)
	a.Status.InitContainerStatuses = []corev1.ContainerStatus{exited("init")}
	// b: sandbox ready, one crash looping, one created, one ephemeral running.
	b := withSandboxReady(withContainers(pod("ns", "b", corev1.PodRunning, "c1", "c2"), crashLooping("c1"), created("c2")), true)
	b.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{running("debug")}
	// c: no sandbox yet, one image pulling (not counted), one with no state.
	cp := withSandboxReady(withContainers(pod("ns", "c", corev1.PodPending, "c1", "c2"), pulling("c1"), noState("c2")), false)
	// d: a phase actorlet does not know, no conditions.
	d := pod("ns", "d", "Weird", "c1")
	c.PodStatus(upd(a, 1))
	c.PodStatus(upd(b, 1))
	c.PodStatus(upd(cp, 1))
	c.PodStatus(upd(d, 1))
	// An orphan counts nowhere.
	c.PodStatus(actors.PodUpdate{UID: "uid-orphan", Seq: 1})
	expectGauges(t, reg, 2, [4]int{3, 2, 1, 1}, map[string]int{"Running": 2, "Pending": 1, "Unknown": 1})

	// Replacing a status replaces its share: a's containers exit, its
	// sandbox goes away and it fails.
	a2 := withSandboxReady(withContainers(pod("ns", "a", corev1.PodFailed, "c1", "c2"), exited("c1"), exited("c2")), false)
	c.PodStatus(upd(a2, 2))
	// A stale update changes nothing.
	c.PodStatus(upd(withSandboxReady(pod("ns", "a", corev1.PodRunning), true), 1))
	expectGauges(t, reg, 1, [4]int{1, 3, 1, 1}, map[string]int{"Running": 1, "Pending": 1, "Unknown": 1, "Failed": 1})

	// Removing every pod brings every gauge back to zero.
	for _, uid := range []string{"uid-a", "uid-b", "uid-c", "uid-d", "uid-orphan"} {
		c.PodStatus(removed(uid, 9))
	}
	expectGauges(t, reg, 0, [4]int{}, nil)
}

func TestStartDurationObservedOnce(t *testing.T) {
	c, reg, clk := newTestCache(t)
	accepted := clk.Now()
	at := func(p *corev1.Pod, seq uint64) actors.PodUpdate {
		return actors.PodUpdate{UID: string(p.UID), Pod: p, Seq: seq, AcceptedAt: accepted}
	}

	c.PodStatus(at(pod("ns", "a", corev1.PodPending, "c1", "c2"), 1))
	clk.Step(2 * time.Second)
	// Running, but c2 is still being created: not started yet.
	c.PodStatus(at(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), running("c1"), created("c2")), 2))
	if n, _ := startHistogram(t, reg); n != 0 {
		t.Fatalf("observed %d starts before every container ran", n)
	}
	clk.Step(1500 * time.Millisecond)
	c.PodStatus(at(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), running("c1"), running("c2")), 3))
	if n, sum := startHistogram(t, reg); n != 1 || sum != 3.5 {
		t.Fatalf("start histogram count %d sum %v; want 1, 3.5", n, sum)
	}

	// Later statuses of the same UID, even after a restart of a container,
	// are not observed again.
	clk.Step(time.Minute)
	c.PodStatus(at(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), crashLooping("c1"), running("c2")), 4))
	c.PodStatus(at(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), running("c1"), running("c2")), 5))
	if n, _ := startHistogram(t, reg); n != 1 {
		t.Fatalf("observed %d starts of one pod; want 1", n)
	}

	// A pod removed and added again with the same UID is a new start.
	c.PodStatus(removed("uid-a", 6))
	accepted = clk.Now()
	clk.Step(time.Second)
	c.PodStatus(at(withContainers(pod("ns", "a", corev1.PodRunning, "c1", "c2"), running("c1"), running("c2")), 1))
	if n, sum := startHistogram(t, reg); n != 2 || sum != 4.5 {
		t.Fatalf("start histogram count %d sum %v; want 2, 4.5", n, sum)
	}

	// The value lands in the kubelet's buckets.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kubelet_pod_start_duration_seconds Duration in seconds from the node accepting a pod to the pod running with all its containers running.
# TYPE kubelet_pod_start_duration_seconds histogram
kubelet_pod_start_duration_seconds_bucket{le="0.5"} 0
kubelet_pod_start_duration_seconds_bucket{le="1"} 1
kubelet_pod_start_duration_seconds_bucket{le="2"} 1
kubelet_pod_start_duration_seconds_bucket{le="3"} 1
kubelet_pod_start_duration_seconds_bucket{le="4"} 2
kubelet_pod_start_duration_seconds_bucket{le="5"} 2
kubelet_pod_start_duration_seconds_bucket{le="6"} 2
kubelet_pod_start_duration_seconds_bucket{le="8"} 2
kubelet_pod_start_duration_seconds_bucket{le="10"} 2
kubelet_pod_start_duration_seconds_bucket{le="20"} 2
kubelet_pod_start_duration_seconds_bucket{le="30"} 2
kubelet_pod_start_duration_seconds_bucket{le="45"} 2
kubelet_pod_start_duration_seconds_bucket{le="60"} 2
kubelet_pod_start_duration_seconds_bucket{le="120"} 2
kubelet_pod_start_duration_seconds_bucket{le="180"} 2
kubelet_pod_start_duration_seconds_bucket{le="240"} 2
kubelet_pod_start_duration_seconds_bucket{le="300"} 2
kubelet_pod_start_duration_seconds_bucket{le="360"} 2
kubelet_pod_start_duration_seconds_bucket{le="480"} 2
kubelet_pod_start_duration_seconds_bucket{le="600"} 2
kubelet_pod_start_duration_seconds_bucket{le="900"} 2
kubelet_pod_start_duration_seconds_bucket{le="1200"} 2
kubelet_pod_start_duration_seconds_bucket{le="1800"} 2
kubelet_pod_start_duration_seconds_bucket{le="2700"} 2
kubelet_pod_start_duration_seconds_bucket{le="3600"} 2
kubelet_pod_start_duration_seconds_bucket{le="+Inf"} 2
kubelet_pod_start_duration_seconds_sum 4.5
kubelet_pod_start_duration_seconds_count 2
`), PodStartDurationName); err != nil {
		t.Fatal(err)
	}
}

func TestStartDurationSkipsPodsOfEarlierRuns(t *testing.T) {
	c, reg, clk := newTestCache(t)
	// Accepted an hour before this Cache (and this process) existed: the
	// status comes from a replay, not from a start.
	old := withContainers(pod("ns", "old", corev1.PodRunning, "c"), running("c"))
	c.PodStatus(actors.PodUpdate{UID: string(old.UID), Pod: old, Seq: 40, AcceptedAt: clk.Now().Add(-time.Hour)})
	// No AcceptedAt at all: nothing to measure from.
	nz := withContainers(pod("ns", "nz", corev1.PodRunning, "c"), running("c"))
	c.PodStatus(actors.PodUpdate{UID: string(nz.UID), Pod: nz, Seq: 1})
	if n, _ := startHistogram(t, reg); n != 0 {
		t.Fatalf("observed %d starts; want 0", n)
	}
	// Not observed later either: the UID's one chance was used.
	clk.Step(time.Second)
	c.PodStatus(actors.PodUpdate{UID: string(nz.UID), Pod: nz, Seq: 2, AcceptedAt: clk.Now()})
	if n, _ := startHistogram(t, reg); n != 0 {
		t.Fatalf("observed %d starts; want 0", n)
	}
}

func TestNewRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, nil)
	if n, err := testutil.GatherAndCount(reg, RunningPodsName, RunningContainersName, PodStartDurationName, PodsByPhaseName); err != nil || n != 1+4+1+5 {
		t.Fatalf("GatherAndCount = %d, %v; want 11 series", n, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second Cache on the same registry did not panic")
		}
	}()
	New(reg, nil)
}

func TestNilRegisterer(t *testing.T) {
	c := New(nil, nil)
	c.PodStatus(upd(pod("ns", "a", corev1.PodRunning, "c"), 1))
	if _, ok := c.Get("uid-a"); !ok {
		t.Fatal("a Cache without a registry stores nothing")
	}
}
