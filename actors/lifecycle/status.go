package lifecycle

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// StatusEnv is what the status needs from outside the pod's journal.
type StatusEnv struct {
	// RuntimeName prefixes container IDs ("containerd://…"), as the kubelet does.
	RuntimeName string
	HostIP      string
	Now         time.Time
}

// StatusView is what Status reads of one adopted state, with the
// environment it was published in: a holder of a published status (the
// node's status cache) keeps it instead of the status, and builds the status
// when asked. Status is pure, so it gives the status that was published.
// It shares the state's PodState and pods, which are never changed once a
// state is adopted (Decide works on a copy and keeps the input's PodState
// when it journals nothing): it costs a few words, not a status.
type StatusView struct {
	p       *pb.PodState
	pod     *corev1.Pod
	desired *corev1.Pod
	env     StatusEnv
}

// ViewStatus returns the StatusView of s in env.
func ViewStatus(s *State, env StatusEnv) StatusView {
	return StatusView{p: s.P, pod: s.Pod, desired: s.desired, env: env}
}

// Valid reports whether v is a state's view (the zero StatusView is not).
func (v StatusView) Valid() bool { return v.p != nil }

// Status is Status of the viewed state in its environment.
func (v StatusView) Status() corev1.PodStatus {
	return Status(&State{P: v.p, Pod: v.pod, desired: v.desired}, v.env)
}

// Status computes the pod's v1 status the way the kubelet does, from the
// state alone.
func Status(s *State, env StatusEnv) corev1.PodStatus {
	st := corev1.PodStatus{Phase: computePhase(s, env.Now), HostIP: env.HostIP, QOSClass: qosClass(s.Pod)}
	if env.HostIP != "" {
		st.HostIPs = []corev1.HostIP{{IP: env.HostIP}}
	}
	p := s.P
	var gen int64
	if d := s.Desired(); d != nil {
		// As the kubelet (PodObservedGenerationTracking, GA): the status
		// and its conditions are of the pod's generation, the spec
		// journaled last.
		gen = d.Generation
		st.ObservedGeneration = gen
	}
	if p.Rejected {
		st.Reason, st.Message = p.Reason, p.Message
		return st
	}
	if p.DeadlineExceeded {
		st.Reason, st.Message = p.FailReason, p.FailMessage
		if st.Reason == "" { // journaled before the reason was kept
			st.Reason, st.Message = ReasonDeadlineExceeded, MessageDeadlineExceeded
		}
	}
	if p.AcceptedAtUnixNano != 0 {
		t := metav1.NewTime(time.Unix(0, p.AcceptedAtUnixNano))
		st.StartTime = &t
	}
	if sb := p.Sandbox; sb != nil && sb.Phase != pb.SandboxPhase_SANDBOX_REMOVED && sb.Id != "" {
		ip := sb.Ip
		if ip == "" && s.Pod != nil && s.Pod.Spec.HostNetwork {
			ip = env.HostIP // a host-network pod has the node's IP, as the kubelet reports it
		}
		if ip != "" {
			st.PodIP = ip
			st.PodIPs = []corev1.PodIP{{IP: ip}}
		}
	}
	if s.Pod == nil {
		return st
	}
	allReady := true
	initialized := Initialized(s)
	var unready, incomplete []string
	for i := range s.Pod.Spec.InitContainers {
		c := &s.Pod.Spec.InitContainers[i]
		cs := containerStatus(s, c, env)
		if isSidecar(c) {
			allReady = allReady && cs.Ready
			if !cs.Ready {
				unready = append(unready, c.Name)
			}
			if cs.Started == nil || !*cs.Started {
				incomplete = append(incomplete, c.Name)
			}
		} else {
			// A regular init container is ready once it completed.
			cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
			if !cs.Ready {
				incomplete = append(incomplete, c.Name)
			}
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	for i := range s.Pod.Spec.Containers {
		cs := containerStatus(s, &s.Pod.Spec.Containers[i], env)
		allReady = allReady && cs.Ready
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	st.EphemeralContainerStatuses = ephemeralStatuses(s, env)
	sandboxReady := p.Sandbox != nil && p.Sandbox.Phase == pb.SandboxPhase_SANDBOX_READY
	ready := allReady && sandboxReady && !p.Terminating && st.Phase == corev1.PodRunning
	var since metav1.Time
	if p.AcceptedAtUnixNano != 0 {
		since = metav1.NewTime(time.Unix(0, p.AcceptedAtUnixNano))
	}
	cond := func(t corev1.PodConditionType, ok bool, reason, message string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: since, ObservedGeneration: gen}
		if ok {
			c.Status = corev1.ConditionTrue
		} else {
			c.Reason, c.Message = reason, message
		}
		return c
	}
	// The reasons and messages of the kubelet's status manager: the
	// containers named in its format, a completed pod as PodCompleted.
	initReason, initMsg := "ContainersNotInitialized", ""
	if len(incomplete) > 0 {
		initMsg = "containers with incomplete status: " + nameList(incomplete)
	}
	readyReason, readyMsg := "ContainersNotReady", ""
	if len(unready) > 0 {
		readyMsg = "containers with unready status: " + nameList(unready)
	}
	if st.Phase == corev1.PodSucceeded {
		initReason, initMsg, readyReason, readyMsg = "PodCompleted", "", "PodCompleted", ""
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, sandboxReady, "", ""),
		cond(corev1.PodInitialized, initialized, initReason, initMsg),
		cond(corev1.ContainersReady, ready, readyReason, readyMsg),
		cond(corev1.PodReady, ready, readyReason, readyMsg),
		cond(corev1.PodScheduled, true, "", ""),
	}
	st.Conditions = append(st.Conditions, resizeConditions(s)...)
	if p.Evicted {
		// The kubelet marks the pods it evicts as disrupted.
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "TerminationByKubelet", Message: p.FailMessage, LastTransitionTime: since, ObservedGeneration: gen})
	}
	if p.Terminated && p.FinalPhase != "" {
		st.Phase = corev1.PodPhase(p.FinalPhase)
	}
	return st
}

// containerStatus is one container's status. Started is always set, as the
// kubelet's prober manager sets it on every container and init container
// status: true only while the container runs and its startup probe, if it
// has one, has succeeded.
func containerStatus(s *State, spec *corev1.Container, env StatusEnv) corev1.ContainerStatus {
	notStarted := false
	cs := corev1.ContainerStatus{Name: spec.Name, Image: spec.Image, Started: &notStarted}
	r := s.P.Containers[spec.Name]
	// A container not created yet waits ContainerCreating, or in a pod with
	// init containers (all of its containers, as the kubelet's default)
	// PodInitializing.
	creating := "ContainerCreating"
	if s.Pod != nil && len(s.Pod.Spec.InitContainers) > 0 {
		creating = "PodInitializing"
	}
	if r == nil {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: creating}
		return cs
	}
	cs.RestartCount = int32(r.RestartCount)
	cs.ImageID = r.ImageRef
	id := func(raw string) string {
		if raw == "" || env.RuntimeName == "" {
			return raw
		}
		return env.RuntimeName + "://" + raw
	}
	if lt := r.LastTermination; lt != nil && (r.Phase != pb.ContainerPhase_CONTAINER_EXITED || lt.ContainerId != r.Id) {
		cs.LastTerminationState.Terminated = terminated(lt, id(lt.ContainerId))
	}
	switch r.Phase {
	case pb.ContainerPhase_CONTAINER_RUNNING:
		cs.ContainerID = id(r.Id)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, r.StartedAtUnixNano))}
		ready, started := containerReady(spec, r)
		cs.Ready = ready && !s.P.Terminating && !s.P.DeadlineExceeded
		cs.Started = &started
	case pb.ContainerPhase_CONTAINER_EXITED:
		term := terminated(r.LastTermination, id(r.Id))
		if s.P.Terminating || s.P.Terminated || !restartWanted(s, r) {
			cs.ContainerID = id(r.Id)
			cs.State.Terminated = term
			break
		}
		// As the kubelet's reason cache: a container to be restarted waits
		// with the reason its restart was held back for (CrashLoopBackOff
		// and its message, a failed pull) until it is requested again, the
		// back-off's expiry included; one restarted at once has no such
		// reason and shows its termination until then.
		if r.WaitingReason == "" {
			cs.ContainerID = id(r.Id)
			cs.State.Terminated = term
			break
		}
		cs.LastTerminationState.Terminated = term
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: r.WaitingReason, Message: r.WaitingMessage}
	case pb.ContainerPhase_CONTAINER_FAILED:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: r.WaitingReason, Message: r.WaitingMessage}
	default:
		reason := creating
		if r.WaitingReason != "" {
			reason = r.WaitingReason
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: r.WaitingMessage}
	}
	if r.Id != "" {
		cs.AllocatedResources, cs.Resources = containerResources(spec, r)
	}
	return cs
}

// containerResources are the kubelet's allocatedResources (the allocation's
// requests) and resources of a container the runtime has: the allocation,
// with the CPU and memory last given to it while it runs.
func containerResources(spec *corev1.Container, r *pb.ContainerRecord) (corev1.ResourceList, *corev1.ResourceRequirements) {
	res := spec.Resources.DeepCopy()
	if r.Phase == pb.ContainerPhase_CONTAINER_RUNNING && r.Applied != nil {
		applied := withResources(*res, r.Applied)
		res = &applied
	}
	return spec.Resources.DeepCopy().Requests, res
}

// resizeConditions are the kubelet's PodResizePending (a resize not
// allocated: Deferred or Infeasible) and PodResizeInProgress (allocated, not
// yet given to every running container; reason Error with the runtime's
// message when it refused).
func resizeConditions(s *State) []corev1.PodCondition {
	p := s.P
	var conds []corev1.PodCondition
	if p.ResizePendingReason != "" {
		conds = append(conds, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
			Reason: p.ResizePendingReason, Message: p.ResizePendingMessage, ObservedGeneration: p.ResizePendingGeneration,
			LastTransitionTime: metav1.NewTime(time.Unix(0, p.ResizePendingAtUnixNano))})
	}
	if resizeInProgress(s) {
		c := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
			ObservedGeneration: p.ResizeGeneration, LastTransitionTime: metav1.NewTime(time.Unix(0, p.ResizeAtUnixNano))}
		if p.ResizeError != "" {
			c.Reason, c.Message = corev1.PodReasonError, p.ResizeError
		}
		conds = append(conds, c)
	}
	return conds
}

// resizeInProgress reports whether a running container has not been given
// its allocation yet, or is being restarted for it (killed, and not
// started again yet).
func resizeInProgress(s *State) bool {
	if s.Pod == nil || s.P.Terminating {
		return false
	}
	for _, cs := range [][]corev1.Container{s.Pod.Spec.InitContainers, s.Pod.Spec.Containers} {
		for i := range cs {
			r := s.P.Containers[cs[i].Name]
			switch {
			case r == nil:
			case r.KillReason == KillResize:
				return true // killed for the resize, not started again yet
			case r.Phase == pb.ContainerPhase_CONTAINER_RUNNING && r.Applied != nil && !sameResources(r.Applied, resourcesOf(&cs[i].Resources)):
				return true
			}
		}
	}
	return false
}

func terminated(t *pb.Termination, id string) *corev1.ContainerStateTerminated {
	if t == nil {
		return &corev1.ContainerStateTerminated{ContainerID: id}
	}
	return &corev1.ContainerStateTerminated{
		ContainerID: id, ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message,
		StartedAt:  metav1.NewTime(time.Unix(0, t.StartedAtUnixNano)),
		FinishedAt: metav1.NewTime(time.Unix(0, t.FinishedAtUnixNano)),
	}
}

// computePhase follows the kubelet's getPhase for app containers: a
// container waiting after a termination counts as stopped.
func computePhase(s *State, now time.Time) corev1.PodPhase {
	p := s.P
	if p.Rejected || p.DeadlineExceeded {
		return corev1.PodFailed
	}
	if p.Terminated && p.FinalPhase != "" {
		return corev1.PodPhase(p.FinalPhase)
	}
	if s.Pod == nil {
		return corev1.PodPending
	}
	if initFailed(s) {
		return corev1.PodFailed
	}
	if !Initialized(s) {
		return corev1.PodPending
	}
	// As the kubelet's getPhase with container restart rules: a pod whose
	// containers all stopped runs on while any of them is to be restarted
	// (by its own rules and policy, or the pod's).
	var waiting, running, stopped, succeeded, final int
	for i := range s.Pod.Spec.Containers {
		c := &s.Pod.Spec.Containers[i]
		r := p.Containers[c.Name]
		switch {
		case r == nil:
			waiting++
		case r.Phase == pb.ContainerPhase_CONTAINER_RUNNING:
			running++
		case r.Phase == pb.ContainerPhase_CONTAINER_EXITED && restartKill(r.KillReason):
			running++ // restarting with its new spec or allocation: the pod has not finished
		case r.Phase == pb.ContainerPhase_CONTAINER_EXITED:
			stopped++
			if r.ExitCode == 0 {
				succeeded++
			}
			if !containerShouldRestart(c, &s.Pod.Spec, r.ExitCode) {
				final++
			}
		case r.LastTermination != nil:
			stopped++
			if !containerShouldRestart(c, &s.Pod.Spec, r.LastTermination.ExitCode) {
				final++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		switch {
		case stopped != final:
			return corev1.PodRunning // some are to be restarted
		case stopped == succeeded:
			return corev1.PodSucceeded
		default:
			return corev1.PodFailed
		}
	}
	return corev1.PodPending
}

// terminalPhase is the phase a pod ends with once torn down: Succeeded when
// every container exited 0, Failed otherwise (and always Failed past its
// active deadline).
func terminalPhase(s *State) corev1.PodPhase {
	if s.Pod == nil || s.P.DeadlineExceeded || initFailed(s) {
		return corev1.PodFailed
	}
	for _, c := range s.Pod.Spec.Containers {
		r := s.P.Containers[c.Name]
		if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_EXITED || r.ExitCode != 0 {
			return corev1.PodFailed
		}
	}
	return corev1.PodSucceeded
}

// Phase is the pod phase the state implies at now.
func Phase(s *State, now time.Time) corev1.PodPhase { return computePhase(s, now) }

// finished reports whether the pod's phase at now is Succeeded or Failed: it
// runs nothing more, and keeps what it ran (its exited containers and their
// logs, its stopped sandbox) until it is removed, as the kubelet keeps them.
func finished(s *State, now time.Time) bool {
	phase := computePhase(s, now)
	return phase == corev1.PodSucceeded || phase == corev1.PodFailed
}

func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod == nil {
		return ""
	}
	return QOSClass(pod)
}

// QOSClass is the pod's QoS class as the API computes it (ComputePodQOS of
// k8s.io/kubernetes pkg/apis/core/v1/helper/qos), over the init and app
// containers and cpu and memory alone: BestEffort when no container
// requests or limits either, Guaranteed when every container's cpu and
// memory requests equal non-zero limits, Burstable otherwise. A static
// pod is not defaulted by an API server, so a missing request reads as
// its limit, as the API's defaulting would set it. Pod-level resources
// (spec.resources) are not considered. It is the one classification of
// both the pod status and the containers' OOM score (actors).
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	var class corev1.PodQOSClass
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			cq := requirementsQOS(&cs[i].Resources)
			switch {
			case cq == corev1.PodQOSBurstable:
				return cq
			case class == "":
				class = cq
			case class != cq:
				return corev1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

// requirementsQOS is the QoS class of one container's resources.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	var class corev1.PodQOSClass
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		lim := r.Limits[res]
		req, ok := r.Requests[res]
		if !ok {
			req = lim // the API's defaulting: requests default to limits
		}
		var rq corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			rq = corev1.PodQOSBestEffort
		default:
			rq = corev1.PodQOSGuaranteed
		}
		if class == "" {
			class = rq
		} else if class != rq {
			return corev1.PodQOSBurstable
		}
	}
	return class
}

// nameList is names as fmt's %s prints a []string ("[a b]"), the
// kubelet's format in the conditions' messages, without fmt's reflection
// (Status runs at each of a pod's state changes).
func nameList(names []string) string {
	return "[" + strings.Join(names, " ") + "]"
}
