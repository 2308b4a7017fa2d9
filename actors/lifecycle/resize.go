package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// In-place resize of CPU and memory, as the kubelet v1.37 does it
// (InPlacePodVerticalScaling, GA):
//
//   - A PodUpdated whose spec changes a container's CPU or memory requests
//     or limits keeps the container's allocation as it was
//     (PodState.allocated; State.Pod is the spec with it), so nothing
//     created meanwhile gets resources the node has not accepted.
//   - The resize is then decided, level-triggered, for a pod that runs: it
//     is allocated (PodResizeAllocated) when it fits, or left pending
//     (PodResizePending): Infeasible when it never can be done here,
//     Deferred when it does not fit. It fits when the node's admission
//     (the Supervisor's, which holds the other pods' allocations) judged it
//     to fit beside the other pods (PodDesired.resize_judged), or, with no
//     admission, when the pod's requests are within the node's allocatable
//     (Config.Allocatable). As in v1.37, requests beyond what the node has
//     are Deferred, not Infeasible (the kubelet's resource-fit reasons,
//     OutOfcpu, ..., map to Deferred). A resize the admission deferred
//     stays so until it is judged again (when a pod gives back what it
//     held, or the spec changes).
//   - A running container whose allocation differs from what it was last
//     given (ContainerRecord.applied) gets it with UpdateContainerResources
//     (ContainerResized), or, when its resizePolicy says RestartContainer for
//     a resource that changed, is killed and started again with it
//     (ContainerResizeRestarting), whatever the pod's restartPolicy and
//     without back-off.
//
// Left out: pod-level resources (a change of spec.resources is
// Infeasible), and the order in which the kubelet applies decreases before
// increases and the pod's cgroup before its containers' (actorlet sets no
// limits on a pod's cgroup).

// KillResize is the kill reason of a running container restarted to take
// its new allocation (resizePolicy RestartContainer).
const KillResize = "ResizeRestart"

const resizeKillFormat = "Container %s resize requires restart"

// messagePodLevelResize is the kubelet's message for a pod-level resources
// resize on a node that cannot do it.
const messagePodLevelResize = "In-place pod-level resources resize is not supported on this node"

// UpdateContainerResources gives a running container (ID) the CPU and memory
// of its allocation: requests and limits as resource.Quantity strings, ""
// for unset. The result's key names them, and they are journaled as
// ContainerResized.
type UpdateContainerResources struct {
	Name                       string
	ID                         string
	CPURequest, CPULimit       string
	MemoryRequest, MemoryLimit string
}

func (e UpdateContainerResources) Key() string {
	return fmt.Sprintf("resize/%s/%s/%s/%s/%s", e.ID, e.CPURequest, e.CPULimit, e.MemoryRequest, e.MemoryLimit)
}

func (e UpdateContainerResources) String() string {
	return fmt.Sprintf("UpdateContainerResources %s id=%s cpu=%s/%s memory=%s/%s", e.Name, e.ID,
		orDash(e.CPURequest), orDash(e.CPULimit), orDash(e.MemoryRequest), orDash(e.MemoryLimit))
}

// Requirements returns rr with the effect's CPU and memory requests and
// limits in place of its own.
func (e UpdateContainerResources) Requirements(rr corev1.ResourceRequirements) corev1.ResourceRequirements {
	return withResources(rr, e.resources())
}

func (e UpdateContainerResources) resources() *pb.Resources {
	return &pb.Resources{CpuRequest: e.CPURequest, CpuLimit: e.CPULimit, MemoryRequest: e.MemoryRequest, MemoryLimit: e.MemoryLimit}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// resourcesOf is the CPU and memory of rr.
func resourcesOf(rr *corev1.ResourceRequirements) *pb.Resources {
	q := func(l corev1.ResourceList, name corev1.ResourceName) string {
		if v, ok := l[name]; ok {
			return v.String()
		}
		return ""
	}
	return &pb.Resources{
		CpuRequest: q(rr.Requests, corev1.ResourceCPU), CpuLimit: q(rr.Limits, corev1.ResourceCPU),
		MemoryRequest: q(rr.Requests, corev1.ResourceMemory), MemoryLimit: q(rr.Limits, corev1.ResourceMemory),
	}
}

func podResourcesOf(pod *corev1.Pod) *pb.Resources {
	if pod.Spec.Resources == nil {
		return &pb.Resources{}
	}
	return resourcesOf(pod.Spec.Resources)
}

// sameQuantity compares two quantity strings by value; "" is unset, which
// equals only unset.
func sameQuantity(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	qa, erra := resource.ParseQuantity(a)
	qb, errb := resource.ParseQuantity(b)
	if erra != nil || errb != nil {
		return a == b
	}
	return qa.Cmp(qb) == 0
}

func sameCPU(a, b *pb.Resources) bool {
	return sameQuantity(a.GetCpuRequest(), b.GetCpuRequest()) && sameQuantity(a.GetCpuLimit(), b.GetCpuLimit())
}

func sameMemory(a, b *pb.Resources) bool {
	return sameQuantity(a.GetMemoryRequest(), b.GetMemoryRequest()) && sameQuantity(a.GetMemoryLimit(), b.GetMemoryLimit())
}

func sameResources(a, b *pb.Resources) bool { return sameCPU(a, b) && sameMemory(a, b) }

// withResources returns a copy of rr with r's CPU and memory.
func withResources(rr corev1.ResourceRequirements, r *pb.Resources) corev1.ResourceRequirements {
	out := *rr.DeepCopy()
	set := func(l *corev1.ResourceList, name corev1.ResourceName, v string) {
		if v == "" {
			delete(*l, name)
			return
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return // not from a quantity: keep what was there
		}
		if *l == nil {
			*l = corev1.ResourceList{}
		}
		(*l)[name] = q
	}
	set(&out.Requests, corev1.ResourceCPU, r.GetCpuRequest())
	set(&out.Limits, corev1.ResourceCPU, r.GetCpuLimit())
	set(&out.Requests, corev1.ResourceMemory, r.GetMemoryRequest())
	set(&out.Limits, corev1.ResourceMemory, r.GetMemoryLimit())
	if len(out.Requests) == 0 {
		out.Requests = nil
	}
	if len(out.Limits) == 0 {
		out.Limits = nil
	}
	return out
}

// allocatedPod is pod with the allocation of the containers in allocated
// (and of the pod-level resources, podRes, when set); pod itself when there
// is none.
func allocatedPod(pod *corev1.Pod, allocated map[string]*pb.Resources, podRes *pb.Resources) *corev1.Pod {
	if pod == nil || (len(allocated) == 0 && podRes == nil) {
		return pod
	}
	cp := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{cp.Spec.InitContainers, cp.Spec.Containers} {
		for i := range cs {
			if r, ok := allocated[cs[i].Name]; ok {
				cs[i].Resources = withResources(cs[i].Resources, r)
			}
		}
	}
	if podRes != nil {
		var rr corev1.ResourceRequirements
		if cp.Spec.Resources != nil {
			rr = *cp.Spec.Resources
		}
		rr = withResources(rr, podRes)
		cp.Spec.Resources = &rr
		if rr.Requests == nil && rr.Limits == nil && len(rr.Claims) == 0 {
			cp.Spec.Resources = nil
		}
	}
	return cp
}

// holdAllocation, folding a PodUpdated with the new spec pod, keeps the
// allocation of every container whose CPU or memory the update changes
// (P.Allocated), and forgets the kept allocation of a container the update
// brings back to it.
func holdAllocation(s *State, pod *corev1.Pod) {
	if s.Pod == nil {
		return
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			want := resourcesOf(&c.Resources)
			if kept, ok := s.P.Allocated[c.Name]; ok {
				if sameResources(kept, want) {
					delete(s.P.Allocated, c.Name)
				}
				continue
			}
			old := s.specContainer(c.Name)
			if old == nil {
				continue
			}
			if have := resourcesOf(&old.Resources); !sameResources(have, want) {
				if s.P.Allocated == nil {
					s.P.Allocated = map[string]*pb.Resources{}
				}
				s.P.Allocated[c.Name] = have
			}
		}
	}
	want := podResourcesOf(pod)
	switch {
	case s.P.AllocatedPodResources != nil:
		if sameResources(s.P.AllocatedPodResources, want) {
			s.P.AllocatedPodResources = nil
		}
	case !sameResources(podResourcesOf(s.Pod), want):
		s.P.AllocatedPodResources = podResourcesOf(s.Pod)
	}
}

func applyPodResizePending(s *State, ev *pb.PodResizePending, at int64) {
	p := s.P
	if ev.Reason == "" {
		p.ResizePendingReason, p.ResizePendingMessage, p.ResizePendingGeneration, p.ResizePendingAtUnixNano = "", "", 0, 0
		p.ResizePendingJudged = false
		return
	}
	if p.ResizePendingReason == "" {
		p.ResizePendingAtUnixNano = at
	}
	p.ResizePendingReason, p.ResizePendingMessage, p.ResizePendingGeneration = ev.Reason, ev.Message, ev.Generation
	p.ResizePendingJudged = ev.Judged
}

func applyPodResizeAllocated(s *State, ev *pb.PodResizeAllocated, at int64) {
	p := s.P
	for _, name := range ev.Containers {
		delete(p.Allocated, name)
	}
	p.ResizePendingReason, p.ResizePendingMessage, p.ResizePendingGeneration, p.ResizePendingAtUnixNano = "", "", 0, 0
	p.ResizePendingJudged = false
	p.ResizeGeneration, p.ResizeAtUnixNano, p.ResizeError, p.ResizeInProgress = ev.Generation, at, "", true
	if s.desired != nil {
		s.setSpec(s.desired)
	}
}

func applyPodResizeCompleted(s *State) {
	s.P.ResizeInProgress, s.P.ResizeError = false, ""
}

// completeResize journals PodResizeCompleted once every running container
// has the allocation of the last PodResizeAllocated (the kubelet clears its
// PodResizeInProgress condition then, and records ResizeCompleted).
func (d *decider) completeResize() {
	if d.s.P.ResizeInProgress && !resizeInProgress(d.s) {
		d.emit(&pb.Event{Kind: &pb.Event_PodResizeCompleted{PodResizeCompleted: &pb.PodResizeCompleted{
			Generation: d.s.P.ResizeGeneration}}})
	}
}

// resizedRecord is the running container the event names, or nil.
func resizedRecord(s *State, name, id string) *pb.ContainerRecord {
	r := s.P.Containers[name]
	if r == nil || r.Id == "" || r.Id != id || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
		return nil
	}
	return r
}

func applyContainerResized(s *State, ev *pb.ContainerResized) {
	if r := resizedRecord(s, ev.Name, ev.ContainerId); r != nil {
		r.Applied = &pb.Resources{CpuRequest: ev.CpuRequest, CpuLimit: ev.CpuLimit, MemoryRequest: ev.MemoryRequest, MemoryLimit: ev.MemoryLimit}
		s.P.ResizeError = ""
	}
}

func applyContainerResizeFailed(s *State, ev *pb.ContainerResizeFailed) {
	if resizedRecord(s, ev.Name, ev.ContainerId) != nil {
		s.P.ResizeError = ev.Message
	}
}

func applyContainerResizeRestarting(s *State, ev *pb.ContainerResizeRestarting) {
	if r := resizedRecord(s, ev.Name, ev.ContainerId); r != nil && r.KillReason == "" {
		r.KillReason, r.KillMessage = KillResize, fmt.Sprintf(resizeKillFormat, ev.Name)
	}
}

// restartKill reports whether a container killed for reason is started
// again at once whatever the restartPolicy: a changed spec, a resize.
func restartKill(reason string) bool { return reason == KillSpecChanged || reason == KillResize }

// allocateResize decides the pod's pending resize, if any: allocated when
// it fits, else PodResizePending with why (journaled again only when the
// verdict or the pod's generation changes).
func (d *decider) allocateResize() {
	p := d.s.P
	desired := d.s.Desired()
	if desired == nil {
		return
	}
	if len(p.Allocated) == 0 && p.AllocatedPodResources == nil {
		if p.ResizePendingReason != "" {
			d.emit(&pb.Event{Kind: &pb.Event_PodResizePending{PodResizePending: &pb.PodResizePending{}}})
		}
		return
	}
	var reason, msg string
	judged := false
	switch v := d.resizeVerdict; {
	case p.AllocatedPodResources != nil:
		reason, msg = corev1.PodReasonInfeasible, messagePodLevelResize
	case v != nil && v.ResizeReason != "":
		// The kubelet's resource-fit reasons (OutOfcpu, ...) are Deferred.
		reason, msg, judged = corev1.PodReasonDeferred, v.ResizeMessage, true
	case v != nil:
		// Judged to fit beside the other pods.
	case p.ResizePendingJudged && p.ResizePendingReason == corev1.PodReasonDeferred:
		return // deferred by the node's admission: it stays so until judged again
	default:
		reason, msg = d.allocatableFit(desired)
	}
	if reason == "" {
		names := make([]string, 0, len(p.Allocated))
		for name := range p.Allocated {
			names = append(names, name)
		}
		slices.Sort(names)
		d.emit(&pb.Event{Kind: &pb.Event_PodResizeAllocated{PodResizeAllocated: &pb.PodResizeAllocated{
			Containers: names, Generation: desired.Generation}}})
		return
	}
	if reason != p.ResizePendingReason || msg != p.ResizePendingMessage || desired.Generation != p.ResizePendingGeneration || judged != p.ResizePendingJudged {
		d.emit(&pb.Event{Kind: &pb.Event_PodResizePending{PodResizePending: &pb.PodResizePending{
			Reason: reason, Message: msg, Generation: desired.Generation, Judged: judged}}})
	}
}

// allocatableFit is the verdict on a resize no admission judged: Deferred,
// with the kubelet's resource-fit message (without the other pods' use,
// which the core does not know), when the pod's requests exceed the node's
// allocatable CPU or memory; "" when it fits.
func (d *decider) allocatableFit(desired *corev1.Pod) (reason, message string) {
	want := resourcehelper.PodRequests(desired, resourcehelper.PodResourcesOptions{})
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		capacity, limited := d.cfg.Allocatable[name]
		req := want[name]
		if !limited || req.Cmp(capacity) <= 0 {
			continue
		}
		return corev1.PodReasonDeferred, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, capacity: %d",
			name, quantityAmount(name, req), quantityAmount(name, capacity))
	}
	return "", ""
}

// quantityAmount is a quantity as the kubelet prints it: CPU in millicores,
// the rest in units.
func quantityAmount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// planResize gives each running container (app containers and sidecars)
// its allocation where it differs from what the container was given:
// UpdateContainerResources, or a restart (ContainerResizeRestarting) when
// its resizePolicy asks for one for a resource that changed.
func (d *decider) planResize(fx *effects) {
	for _, cs := range [][]corev1.Container{d.s.Pod.Spec.InitContainers, d.s.Pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			r := d.s.P.Containers[c.Name]
			if r == nil || r.Id == "" || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING || r.KillReason != "" || r.Applied == nil {
				continue
			}
			want := resourcesOf(&c.Resources)
			if sameResources(r.Applied, want) {
				continue
			}
			if resizeRestarts(c, r.Applied, want) {
				d.emit(&pb.Event{Kind: &pb.Event_ContainerResizeRestarting{ContainerResizeRestarting: &pb.ContainerResizeRestarting{
					Name: c.Name, ContainerId: r.Id}}})
				continue
			}
			fx.add(UpdateContainerResources{Name: c.Name, ID: r.Id,
				CPURequest: want.CpuRequest, CPULimit: want.CpuLimit, MemoryRequest: want.MemoryRequest, MemoryLimit: want.MemoryLimit})
		}
	}
}

// resizeRestarts reports whether going from have to want restarts c: its
// resizePolicy is RestartContainer for a resource whose value changes
// (NotRequired, the default, changes it in place).
func resizeRestarts(c *corev1.Container, have, want *pb.Resources) bool {
	for _, pol := range c.ResizePolicy {
		if pol.RestartPolicy != corev1.RestartContainer {
			continue
		}
		switch pol.ResourceName {
		case corev1.ResourceCPU:
			if !sameCPU(have, want) {
				return true
			}
		case corev1.ResourceMemory:
			if !sameMemory(have, want) {
				return true
			}
		}
	}
	return false
}

// resizeResult takes UpdateContainerResources' outcome (rest: the key
// after "resize/").
func (d *decider) resizeResult(rest string, res *pb.EffectResult) {
	var id string
	vals := &pb.Resources{}
	fields := []*string{&id, &vals.CpuRequest, &vals.CpuLimit, &vals.MemoryRequest, &vals.MemoryLimit}
	parts := strings.SplitN(rest, "/", len(fields))
	if len(parts) != len(fields) {
		return
	}
	for i, f := range fields {
		*f = parts[i]
	}
	r := d.recordByID(id)
	if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
		return
	}
	if res.Failed {
		if res.Message != d.s.P.ResizeError {
			d.emit(&pb.Event{Kind: &pb.Event_ContainerResizeFailed{ContainerResizeFailed: &pb.ContainerResizeFailed{
				Name: r.Name, ContainerId: id, Message: res.Message}}})
		}
		return
	}
	if r.Applied == nil || !sameResources(r.Applied, vals) || d.s.P.ResizeError != "" {
		d.emit(&pb.Event{Kind: &pb.Event_ContainerResized{ContainerResized: &pb.ContainerResized{
			Name: r.Name, ContainerId: id, CpuRequest: vals.CpuRequest, CpuLimit: vals.CpuLimit,
			MemoryRequest: vals.MemoryRequest, MemoryLimit: vals.MemoryLimit}}})
	}
}
