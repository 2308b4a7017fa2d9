package actors

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// An in-place resize gives the running container the Linux resources of
// its allocation (the effect's CPU and memory over the pod's spec), as the
// runtime then reports them, without restarting it; done again, it changes
// nothing. A memory limit below the container's usage is refused. A
// container that is gone fails the effect.
func TestUpdateContainerResourcesEffect(t *testing.T) {
	rt, client := newSim(t)
	ctx := context.Background()
	sb, sbCfg := simSandbox(t, client)
	d := &Deps{Runtime: client}
	d.withDefaults()
	a := &containerActor{uid: "uid-p", deps: d}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		}}}}}
	id, err := client.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	e := lifecycle.UpdateContainerResources{Name: "app", ID: id, CPURequest: "1", CPULimit: "2", MemoryRequest: "256Mi", MemoryLimit: "512Mi"}
	for try := range 2 {
		res, err := a.run(ctx, &runEffect{effect: e, pod: pod, retry: try > 0})
		if err != nil || res.GetFailed() || res.GetKey() != e.Key() {
			t.Fatalf("try %d: %v, result %v", try, err, res)
		}
		st, err := client.ContainerStatus(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		r := st.GetResources().GetLinux()
		if r.GetCpuShares() != 1024 || r.GetCpuQuota() != 200000 || r.GetCpuPeriod() != 100000 || r.GetMemoryLimitInBytes() != 512<<20 {
			t.Fatalf("try %d: runtime resources %v", try, r)
		}
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || st.GetStartedAt() == 0 {
			t.Fatalf("try %d: the container was disturbed: %v", try, st)
		}
	}
	// Lowered to or below what the container uses: refused, as the kubelet
	// refuses it; the container keeps its limit.
	low := e
	low.MemoryRequest, low.MemoryLimit = "10Ki", "10Ki"
	res, err := a.run(ctx, &runEffect{effect: low, pod: pod})
	if err == nil || !res.GetFailed() || !strings.Contains(res.GetMessage(), `cannot decrease memory limits: attempting to set container "app" memory limit (10240) below current usage (`) {
		t.Fatalf("memory limit below usage: %v, result %v", err, res)
	}
	if cri.Retryable(err) || res.GetErrorKind() != cri.FailedPrecondition.String() {
		t.Fatalf("memory limit below usage is %s (retryable %v), want a definitive FailedPrecondition", res.GetErrorKind(), cri.Retryable(err))
	}
	if st, _ := client.ContainerStatus(ctx, id); st.GetResources().GetLinux().GetMemoryLimitInBytes() != 512<<20 {
		t.Fatalf("a refused resize changed the limit: %v", st.GetResources())
	}
	if err := client.StopContainer(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if err := client.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err = a.run(ctx, &runEffect{effect: e, pod: pod})
	if err == nil || !res.GetFailed() || res.GetReason() != "ResizeError" {
		t.Fatalf("resize of a removed container: %v, result %v", err, res)
	}
	if v := rt.Info().Violations; len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}

// A resize to a memory limit below what the container uses, as in the
// upstream spec "decrease memory limit below usage": the node refuses it,
// and the pod shows it at once, as the kubelet does, in the
// PodResizeInProgress condition with reason Error and the message
// "... memory limit (N) below current usage (M)" (no PodResizePending),
// while the container keeps its limit and runs on; it is not retried
// silently forever as a transient failure. Reverted, the resize is done and
// the condition withdrawn.
func TestResizeMemoryBelowUsageIsAnError(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, j)
	withMemory := func(mem string) *corev1.Pod {
		p := testPod("m")
		q := resource.MustParse(mem)
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: q}, Limits: corev1.ResourceList{corev1.ResourceMemory: q}}
		return p
	}
	cond := func(s *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
		for i := range s.Conditions {
			if s.Conditions[i].Type == t {
				return &s.Conditions[i]
			}
		}
		return nil
	}
	send := func(p *corev1.Pod) { system.Root.Send(sup, &SourceSnapshot{Source: "api", Pods: []*corev1.Pod{p}}) }
	send(withMemory("256Mi"))
	waitUntil(t, "pod Running", func() bool {
		u, _ := st.get("uid-m")
		return running(u)
	})
	send(withMemory("10Ki"))
	belowUsage := regexp.MustCompile(`memory limit \(\d+\) below current usage`)
	waitUntil(t, "PodResizeInProgress with reason Error", func() bool {
		u, ok := st.get("uid-m")
		if !ok || u.Status == nil {
			return false
		}
		c := cond(u.Status, corev1.PodResizeInProgress)
		return c != nil && c.Reason == corev1.PodReasonError && belowUsage.MatchString(c.Message) &&
			cond(u.Status, corev1.PodResizePending) == nil
	})
	u, _ := st.get("uid-m")
	if cs := u.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil ||
		cs.Resources == nil || cs.Resources.Limits.Memory().String() != "256Mi" {
		t.Fatalf("the refused resize disturbed the container: %+v", cs)
	}
	send(withMemory("256Mi"))
	waitUntil(t, "the revert done, the resize conditions withdrawn", func() bool {
		u, ok := st.get("uid-m")
		if !ok || u.Status == nil || len(u.Status.ContainerStatuses) == 0 {
			return false
		}
		cs := u.Status.ContainerStatuses[0]
		return cond(u.Status, corev1.PodResizeInProgress) == nil && cond(u.Status, corev1.PodResizePending) == nil &&
			cs.AllocatedResources.Memory().String() == "256Mi"
	})
}
