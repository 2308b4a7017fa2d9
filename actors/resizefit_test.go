package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// cpuFit admits pods whose CPU requests fit in n millicores beside the
// admitted ones.
type cpuFit int64

func (n cpuFit) Admit(pod *corev1.Pod, admitted []*corev1.Pod) (string, string) {
	req := func(p *corev1.Pod) int64 {
		var sum int64
		for _, c := range p.Spec.Containers {
			sum += c.Resources.Requests.Cpu().MilliValue()
		}
		return sum
	}
	var used int64
	for _, p := range admitted {
		used += req(p)
	}
	if used+req(pod) > int64(n) {
		return "OutOfcpu", fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: %d, capacity: %d", req(pod), used, n)
	}
	return "", ""
}

func withCPU(p *corev1.Pod, cpu string) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return p
}

// A resize is judged beside the other pods the node holds, not counting
// the pod's own place: it fits and is held from then on, or is deferred
// with the admission's message while the pod keeps what it held, until a
// pod gives its share back. Pods the node does not hold are not judged.
func TestAdmissionJudgesResizes(t *testing.T) {
	ad := newAdmission(cpuFit(4000))
	a, b := withCPU(testPod("a"), "1"), withCPU(testPod("b"), "2")
	for _, p := range []*corev1.Pod{a, b} {
		if reason, msg := ad.admit(p); reason != "" {
			t.Fatalf("admit %s: %s %s", p.Name, reason, msg)
		}
	}
	b3 := withCPU(b, "3")
	if judged, reason, _ := ad.resize(b3); !judged || reason != "" || ad.pods["uid-b"] != b3 {
		t.Fatalf("b to 3 CPUs beside a's 1 of 4: judged %v reason %q, held %v", judged, reason, ad.pods["uid-b"].Spec.Containers[0].Resources)
	}
	a2 := withCPU(a, "2")
	judged, reason, msg := ad.resize(a2)
	if !judged || reason != "OutOfcpu" || msg != "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000" || ad.pods["uid-a"] != a {
		t.Fatalf("a to 2 CPUs beside b's 3 of 4: judged %v %q %q", judged, reason, msg)
	}
	if !ad.pendingResize(a2) || ad.pendingResize(b3) {
		t.Fatal("a's resize should be pending, b's not")
	}
	ad.release("uid-b")
	if judged, reason, _ := ad.resize(a2); !judged || reason != "" || ad.pendingResize(a2) {
		t.Fatalf("a to 2 CPUs once b left: judged %v reason %q", judged, reason)
	}
	if judged, _, _ := ad.resize(withCPU(testPod("c"), "1")); judged {
		t.Fatal("a pod the node does not hold was judged")
	}
	podLevel := a2.DeepCopy()
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}
	podLevel.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	if judged, reason, _ := ad.resize(podLevel); !judged || reason != "" || ad.pods["uid-a"] != a2 {
		t.Fatalf("a pod-level resize: judged %v reason %q; it holds nothing new", judged, reason)
	}
}

// An in-place resize end to end: deferred while another pod holds the
// node's CPU (the container keeps its allocation, and runs on), then, once
// that pod is gone, allocated and given to the running container by the
// runtime, without a restart; the resize conditions are withdrawn.
func TestResizeDeferredThenApplied(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Admission: cpuFit(4000), Logger: zaptest.NewLogger(t)}, j)
	send := func(pods ...*corev1.Pod) {
		system.Root.Send(sup, &SourceSnapshot{Source: "api", Pods: pods})
	}
	t.Cleanup(func() {
		if t.Failed() {
			j.mu.Lock()
			defer j.mu.Unlock()
			for _, env := range j.streams["uid-a"] {
				t.Logf("a's journal: %d %s %s", env.Seq, env.GetEvent().Name(), env.GetEvent().Describe(time.Time{}))
			}
		}
	})
	a, b := withCPU(testPod("a"), "1"), withCPU(testPod("b"), "2")
	send(a, b)
	waitUntil(t, "a and b Running", func() bool {
		pa, _ := phaseOf(st, "uid-a")
		pb, _ := phaseOf(st, "uid-b")
		return pa == corev1.PodRunning && pb == corev1.PodRunning
	})
	cond := func(s *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
		for i := range s.Conditions {
			if s.Conditions[i].Type == t {
				return &s.Conditions[i]
			}
		}
		return nil
	}
	allocatedCPU := func(s *corev1.PodStatus) string {
		if len(s.ContainerStatuses) == 0 {
			return ""
		}
		return s.ContainerStatuses[0].AllocatedResources.Cpu().String()
	}
	a2 := withCPU(a, "3")
	send(a2, b)
	waitUntil(t, "a's resize Deferred", func() bool {
		u, ok := st.get("uid-a")
		if !ok || u.Status == nil {
			return false
		}
		c := cond(u.Status, corev1.PodResizePending)
		return c != nil && c.Reason == corev1.PodReasonDeferred && allocatedCPU(u.Status) == "1"
	})
	send(a2)
	waitUntil(t, "a's resize applied once b is gone", func() bool {
		u, ok := st.get("uid-a")
		if !ok || u.Status == nil || len(u.Status.ContainerStatuses) == 0 {
			return false
		}
		s := u.Status
		res := s.ContainerStatuses[0].Resources
		return cond(s, corev1.PodResizePending) == nil && cond(s, corev1.PodResizeInProgress) == nil &&
			allocatedCPU(s) == "3" && res != nil && res.Requests.Cpu().String() == "3"
	})
	u, _ := st.get("uid-a")
	if cs := u.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil {
		t.Fatalf("the resized container was restarted: %+v", cs)
	}
	cs, err := client.ListContainers(context.Background(), &runtimeapi.ContainerFilter{LabelSelector: map[string]string{cri.LabelPodUID: "uid-a"}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("containers of a: %v %v", cs, err)
	}
	rs, err := client.ContainerStatus(context.Background(), cs[0].Id)
	if err != nil {
		t.Fatal(err)
	}
	if shares := rs.GetResources().GetLinux().GetCpuShares(); shares != 3072 {
		t.Fatalf("a's container has %d CPU shares in the runtime, want 3072 (3 CPUs)", shares)
	}
}
