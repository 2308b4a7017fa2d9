package kubeletmetrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/node/probe"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestOperationTypeIsTheKubelets(t *testing.T) {
	for rpc, want := range map[string]string{
		"RunPodSandbox": "run_podsandbox", "StopPodSandbox": "stop_podsandbox", "PodSandboxStatus": "podsandbox_status",
		"ListPodSandbox": "list_podsandbox", "CreateContainer": "create_container", "ListContainers": "list_containers",
		"ContainerStatus": "container_status", "PullImage": "pull_image", "ImageFsInfo": "image_fs_info",
		"ExecSync": "exec_sync", "Version": "version", "ListPodSandboxStats": "list_podsandbox_stats",
		"ReopenContainerLog": "reopen_container_log", "ListContainerStats": "list_container_stats",
	} {
		if got := OperationType(rpc); got != want {
			t.Errorf("OperationType(%q) = %q, want %q", rpc, got, want)
		}
	}
}

func TestImageSizeBucket(t *testing.T) {
	for size, want := range map[uint64]string{0: "0-10MB", 10<<20 - 1: "0-10MB", 10 << 20: "10MB-100MB",
		700 << 20: "500MB-1GB", 3 << 30: "1GB-5GB", 200 << 30: "GT100GB"} {
		if got := ImageSizeBucket(size); got != want {
			t.Errorf("ImageSizeBucket(%d) = %q, want %q", size, got, want)
		}
	}
}

func TestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg); err == nil {
		t.Fatal("registering twice on one registry did not fail")
	}
	m.CallDone("RunPodSandbox", 10*time.Millisecond, nil)
	m.CallDone("RunPodSandbox", time.Second, errors.New("boom"))
	if got := testutil.ToFloat64(m.runtimeOps.WithLabelValues("run_podsandbox")); got != 2 {
		t.Errorf("run_podsandbox operations = %v", got)
	}
	if got := testutil.ToFloat64(m.runtimeErrs.WithLabelValues("run_podsandbox")); got != 1 {
		t.Errorf("run_podsandbox errors = %v", got)
	}

	t0 := time.Unix(1000, 0)
	m.Relisted(t0, time.Second)
	m.Relisted(t0.Add(3*time.Second), time.Second)
	if got := testutil.ToFloat64(m.lastSeen); got != 1004 {
		t.Errorf("last seen = %v, want 1004", got)
	}
	if n := testutil.CollectAndCount(m.relistInterval); n != 1 {
		t.Errorf("interval collected %d series", n)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "app"}}}}
	ev := func(e *pb.Event) *pb.Envelope { return &pb.Envelope{Event: e} }
	m.Recorded(pod, []*pb.Envelope{
		ev(&pb.Event{Kind: &pb.Event_SandboxRequested{SandboxRequested: &pb.SandboxRequested{Attempt: 1}}}),
		ev(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{Attempt: 1}}}),
		ev(&pb.Event{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{Name: "init"}}}),
		ev(&pb.Event{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{Name: "app"}}}),
		ev(&pb.Event{Kind: &pb.Event_ContainerFailed{ContainerFailed: &pb.ContainerFailed{Name: "app", Reason: "CreateContainerError"}}}),
		ev(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "app", PullNanos: int64(2 * time.Second), ImageSize: 50 << 20}}}),
		// Already present: not a pull.
		ev(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "init"}}}),
		ev(&pb.Event{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{}}}),
		ev(&pb.Event{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{Name: "init", Reason: "Completed"}}}),
		ev(&pb.Event{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{Name: "app", ExitCode: 137, Reason: "OOMKilled"}}}),
	})
	m.SetNodeName("node-1")
	for _, reason := range []string{"OutOfcpu", "OutOfnvidia.com/gpu", "my-quota", "InvalidSpec", "SysctlForbidden"} {
		m.Recorded(pod, []*pb.Envelope{ev(&pb.Event{Kind: &pb.Event_PodRejected{PodRejected: &pb.PodRejected{Reason: reason}}})})
	}
	if err := testutil.CollectAndCompare(m.admissionRejections, strings.NewReader(`
# HELP kubelet_admission_rejections_total Cumulative number pod admission rejections by the Kubelet.
# TYPE kubelet_admission_rejections_total counter
kubelet_admission_rejections_total{reason="OutOfExtendedResources"} 1
kubelet_admission_rejections_total{reason="OutOfcpu"} 1
kubelet_admission_rejections_total{reason="Other"} 1
kubelet_admission_rejections_total{reason="SysctlForbidden"} 1
`)); err != nil {
		t.Error(err)
	}
	for name, c := range map[string]prometheus.Collector{
		"started pods": m.startedPods, "started pod errors": m.startedPodsErrs,
		"started init containers": m.startedContainers.WithLabelValues("init_container"),
		"started containers":      m.startedContainers.WithLabelValues("container"),
		"container errors":        m.startedContainersErrs.WithLabelValues("container", "CreateContainerError"),
		"init terminations":       m.terminatedContainers.WithLabelValues("init_container", "0", "Completed"),
		"app terminations":        m.terminatedContainers.WithLabelValues("container", "137", "OOMKilled"),
		"node name":               m.nodeName.WithLabelValues("node-1"),
	} {
		if got := testutil.ToFloat64(c); got != 1 {
			t.Errorf("%s = %v, want 1", name, got)
		}
	}
	want := `
# HELP kubelet_image_pull_duration_seconds Duration in seconds to pull an image.
# TYPE kubelet_image_pull_duration_seconds histogram
`
	var b strings.Builder
	b.WriteString(want)
	for _, le := range []string{"1", "5", "10", "20", "30", "60", "120", "180", "240", "300", "360", "480", "600", "900", "1200", "1800", "2700", "3600", "+Inf"} {
		n := "1"
		if le == "1" {
			n = "0"
		}
		b.WriteString(`kubelet_image_pull_duration_seconds_bucket{image_size_in_bytes="10MB-100MB",le="` + le + `"} ` + n + "\n")
	}
	b.WriteString(`kubelet_image_pull_duration_seconds_sum{image_size_in_bytes="10MB-100MB"} 2` + "\n")
	b.WriteString(`kubelet_image_pull_duration_seconds_count{image_size_in_bytes="10MB-100MB"} 1` + "\n")
	if err := testutil.CollectAndCompare(m.imagePull, strings.NewReader(b.String())); err != nil {
		t.Error(err)
	}

	if err := testutil.CollectAndCompare(m.containersPerPod, strings.NewReader(`
# HELP kubelet_containers_per_pod_count The number of containers per pod.
# TYPE kubelet_containers_per_pod_count histogram
kubelet_containers_per_pod_count_bucket{le="1"} 1
kubelet_containers_per_pod_count_bucket{le="2"} 1
kubelet_containers_per_pod_count_bucket{le="4"} 1
kubelet_containers_per_pod_count_bucket{le="8"} 1
kubelet_containers_per_pod_count_bucket{le="16"} 1
kubelet_containers_per_pod_count_bucket{le="+Inf"} 1
kubelet_containers_per_pod_count_sum 1
kubelet_containers_per_pod_count_count 1
`)); err != nil {
		t.Error(err)
	}

	m.Synced("create", 5*time.Millisecond)
	if n := testutil.CollectAndCount(m.podWorker); n != 1 {
		t.Errorf("pod worker: %d series", n)
	}

	m.Appended(3, time.Millisecond)
	if n := testutil.CollectAndCount(m.appendEvents); n != 1 {
		t.Errorf("append events: %d series", n)
	}

	m.Evicted("memory.available")
	if got := testutil.ToFloat64(m.evictions.WithLabelValues("memory.available")); got != 1 {
		t.Errorf("evictions = %v", got)
	}

	p := CountedProber{Prober: fixedProber{probe.Failure}, Metrics: m}
	p.Probe(context.Background(), probe.Target{Pod: pod, Container: &pod.Spec.Containers[0], Kind: probe.Readiness}, corev1.ProbeHandler{}, time.Second)
	if got := testutil.ToFloat64(m.probes.WithLabelValues("Readiness", "failed", "app", "web", "default", "u1")); got != 1 {
		t.Errorf("probes = %v", got)
	}
}

type fixedProber struct{ r probe.Result }

func (f fixedProber) Probe(context.Context, probe.Target, corev1.ProbeHandler, time.Duration) (probe.Result, string) {
	return f.r, ""
}

// TestActorGauges checks the effect and mailbox gauges go up and down.
func TestActorGauges(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m.EffectStarted("runsandbox")
	m.EffectStarted("runsandbox")
	m.EffectStarted("pull")
	m.EffectEnded("runsandbox")
	if got := testutil.ToFloat64(m.effects.WithLabelValues("runsandbox")); got != 1 {
		t.Errorf("runsandbox in flight = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.effects.WithLabelValues("pull")); got != 1 {
		t.Errorf("pull in flight = %v, want 1", got)
	}
	m.MessagePosted(nil)
	m.MessagePosted(nil)
	m.MessageReceived(nil)
	if got := testutil.ToFloat64(m.mailbox); got != 1 {
		t.Errorf("mailbox messages = %v, want 1", got)
	}
}

// Nodes sharing the families: their counts add up, each node's relists
// are timed apart (not between two nodes' listings), and each node has
// its kubelet_node_name series; nothing is registered twice.
func TestNodesShareTheFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	b := a.Node()
	a.SetNodeName("fleet-0")
	b.SetNodeName("fleet-1")
	a.CallDone("RunPodSandbox", time.Millisecond, nil)
	b.CallDone("RunPodSandbox", time.Millisecond, nil)
	if got := testutil.ToFloat64(a.runtimeOps.WithLabelValues("run_podsandbox")); got != 2 {
		t.Errorf("run_podsandbox operations of the two nodes = %v, want 2", got)
	}
	t0 := time.Unix(1000, 0)
	// a lists at 0 s and 10 s, b at 1 s and 12 s: intervals 10 s and 11 s,
	// none of 1 s or 2 s (between the nodes).
	a.Relisted(t0, time.Millisecond)
	b.Relisted(t0.Add(time.Second), time.Millisecond)
	a.Relisted(t0.Add(10*time.Second), time.Millisecond)
	b.Relisted(t0.Add(12*time.Second), time.Millisecond)
	if err := testutil.CollectAndCompare(a.relistInterval, strings.NewReader(`
# HELP kubelet_pleg_relist_interval_seconds Interval in seconds between relisting in PLEG.
# TYPE kubelet_pleg_relist_interval_seconds histogram
kubelet_pleg_relist_interval_seconds_bucket{le="0.005"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.01"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.025"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.05"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.1"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.25"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="0.5"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="1"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="2.5"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="5"} 0
kubelet_pleg_relist_interval_seconds_bucket{le="10"} 1
kubelet_pleg_relist_interval_seconds_bucket{le="+Inf"} 2
kubelet_pleg_relist_interval_seconds_sum 21
kubelet_pleg_relist_interval_seconds_count 2
`)); err != nil {
		t.Error(err)
	}
	if err := testutil.CollectAndCompare(a.nodeName, strings.NewReader(`
# HELP kubelet_node_name The node's name. The count is always 1.
# TYPE kubelet_node_name gauge
kubelet_node_name{node="fleet-0"} 1
kubelet_node_name{node="fleet-1"} 1
`)); err != nil {
		t.Error(err)
	}
}
