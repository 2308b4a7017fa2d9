package lifecycle

import (
	"slices"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Apply folds one journaled event into s. It is deterministic, has no side
// effects besides changing s, and is used both live and on replay. Events
// that do not fit the state (possible only in a corrupt journal) are folded as
// far as they make sense; Apply never panics on them.
func Apply(s *State, env *pb.Envelope) {
	s.P.Seq = env.GetSeq()
	at := env.GetTimeUnixNano()
	switch e := env.GetEvent().GetKind().(type) {
	case *pb.Event_PodAccepted:
		ev := e.PodAccepted
		if s.P.Removed {
			// The same UID again after its removal (a static manifest put
			// back as it was): a new life. Only the sequence and the attempt
			// numbers carry over, so no runtime object is ever mistaken for
			// one of the earlier life.
			old := s.P
			s.P = &pb.PodState{Uid: old.Uid, Seq: old.Seq, SandboxAttempt: old.SandboxAttempt,
				Containers: map[string]*pb.ContainerRecord{}}
			for name, r := range old.Containers {
				s.P.Containers[name] = &pb.ContainerRecord{Name: name, Attempt: r.Attempt}
			}
		}
		s.P.SpecDigest = ev.SpecDigest
		s.P.Source = ev.Source
		s.P.AcceptedAtUnixNano = at
		pod, exact, err := s.decode(ev.PodJson)
		s.setSpecJSON(ev.PodJson, exact)
		if err == nil {
			s.setSpec(pod)
		} else {
			s.Pod, s.desired = nil, nil
			s.P.Rejected = true
			s.P.Reason = "InvalidSpec"
			s.P.Message = err.Error()
		}
	case *pb.Event_PodRejected:
		ev := e.PodRejected
		s.P.Rejected = true
		s.P.Reason = ev.Reason
		s.P.Message = ev.Message
		if len(ev.PodJson) > 0 && !s.hasSpec() {
			pod, exact, err := s.decode(ev.PodJson)
			s.setSpecJSON(ev.PodJson, exact)
			if err == nil {
				s.setSpec(pod)
			}
		}
		if s.P.AcceptedAtUnixNano == 0 {
			s.P.AcceptedAtUnixNano = at
		}
	case *pb.Event_ImagePulled:
		ev := e.ImagePulled
		r := s.container(ev.Container)
		r.ImageRef = ev.ImageRef
		r.PulledAttempt = ev.Attempt
		if r.Phase == pb.ContainerPhase_CONTAINER_FAILED {
			r.WaitingReason, r.WaitingMessage = "", ""
		}
	case *pb.Event_ImagePullFailed:
		ev := e.ImagePullFailed
		r := s.container(ev.Container)
		r.Failures++
		r.WaitingReason = ev.Reason
		r.WaitingMessage = ev.Message
		if r.Phase == pb.ContainerPhase_CONTAINER_NONE {
			r.Phase = pb.ContainerPhase_CONTAINER_FAILED
		}
	case *pb.Event_SandboxRequested:
		ev := e.SandboxRequested
		var failures uint32
		if sb := s.P.Sandbox; sb != nil {
			if sb.Id != "" && sb.Phase != pb.SandboxPhase_SANDBOX_REMOVED {
				s.P.OldSandboxes = append(s.P.OldSandboxes, sb)
			}
			failures = sb.Failures
		}
		s.P.SandboxAttempt = ev.Attempt
		s.P.Sandbox = &pb.SandboxRecord{Attempt: ev.Attempt, Phase: pb.SandboxPhase_SANDBOX_REQUESTED, Failures: failures}
	case *pb.Event_SandboxCreated:
		ev := e.SandboxCreated
		if sb := s.P.Sandbox; sb != nil && sb.Attempt == ev.Attempt {
			sb.Id = ev.SandboxId
			sb.Ip = ev.Ip
			sb.Phase = pb.SandboxPhase_SANDBOX_READY
			sb.Failures = 0
			sb.Reason, sb.Message = "", ""
			sb.CreatedAtUnixNano, sb.CreatedEpoch = at, ev.Epoch
			rerunInit(s)
		}
	case *pb.Event_SandboxFailed:
		ev := e.SandboxFailed
		if sb := s.P.Sandbox; sb != nil && sb.Attempt == ev.Attempt {
			sb.Phase = pb.SandboxPhase_SANDBOX_FAILED
			sb.Reason = ev.Reason
			sb.Message = ev.Message
			sb.RetryAtUnixNano = ev.RetryAtUnixNano
			sb.Failures++
		}
	case *pb.Event_SandboxLost:
		ev := e.SandboxLost
		if sb := s.P.Sandbox; sb != nil && sb.Id == ev.SandboxId {
			sb.Phase = pb.SandboxPhase_SANDBOX_FAILED
			sb.Reason = ev.Reason
		}
	case *pb.Event_ContainerRequested:
		ev := e.ContainerRequested
		r := s.container(ev.Name)
		if r.Phase == pb.ContainerPhase_CONTAINER_EXITED {
			r.RestartCount++
		}
		if r.Id != "" && !slices.Contains(r.DeadIds, r.Id) {
			r.DeadIds = append(r.DeadIds, r.Id)
		}
		if ev.Adopted {
			r.RestartCount = ev.RestartCount
		}
		r.Attempt = ev.Attempt
		r.Id = ""
		r.Ready, r.StartupDone, r.KillReason, r.KillMessage = false, false, "", ""
		r.Phase = pb.ContainerPhase_CONTAINER_REQUESTED
		r.WaitingReason, r.WaitingMessage = "", ""
		r.StartedAtUnixNano, r.FinishedAtUnixNano, r.CreatedAtUnixNano, r.CreatedEpoch = 0, 0, 0, 0
		r.StopRequestedId = ""
		if c := s.specContainer(ev.Name); c != nil {
			r.Applied = resourcesOf(&c.Resources) // created with its allocation
		}
	case *pb.Event_ContainerStopRequested:
		ev := e.ContainerStopRequested
		if r := s.P.Containers[ev.Name]; r != nil && r.Id == ev.ContainerId {
			r.StopRequestedId = ev.ContainerId
		}
	case *pb.Event_ContainerCreated:
		ev := e.ContainerCreated
		r := s.container(ev.Name)
		if r.Attempt == ev.Attempt && r.Phase == pb.ContainerPhase_CONTAINER_REQUESTED {
			r.Id = ev.ContainerId
			r.Phase = pb.ContainerPhase_CONTAINER_CREATED
			r.CreatedAtUnixNano, r.CreatedEpoch = at, ev.Epoch
		}
	case *pb.Event_ContainerFailed:
		ev := e.ContainerFailed
		r := s.container(ev.Name)
		if r.Attempt == ev.Attempt {
			if ev.ContainerId != "" && !slices.Contains(r.DeadIds, ev.ContainerId) {
				r.DeadIds = append(r.DeadIds, ev.ContainerId)
			}
			if r.Id == ev.ContainerId {
				r.Id = ""
			}
			r.Phase = pb.ContainerPhase_CONTAINER_FAILED
			r.Failures++
			r.WaitingReason = ev.Reason
			r.WaitingMessage = ev.Message
		}
	case *pb.Event_ContainerStarted:
		ev := e.ContainerStarted
		r := s.container(ev.Name)
		if r.Id == ev.ContainerId && r.Phase == pb.ContainerPhase_CONTAINER_CREATED {
			r.Phase = pb.ContainerPhase_CONTAINER_RUNNING
			r.StartedAtUnixNano = ev.StartedAtUnixNano
			r.Failures = 0
			if s.P.RunningAtUnixNano == 0 {
				s.P.RunningAtUnixNano = at
			}
		}
	case *pb.Event_ContainerExited:
		ev := e.ContainerExited
		r := s.container(ev.Name)
		if r.Id == ev.ContainerId && r.Phase != pb.ContainerPhase_CONTAINER_EXITED {
			r.Phase = pb.ContainerPhase_CONTAINER_EXITED
			r.Ready = false
			r.ExitCode = ev.ExitCode
			r.Reason = ev.Reason
			r.Message = ev.Message
			if ev.StartedAtUnixNano != 0 {
				r.StartedAtUnixNano = ev.StartedAtUnixNano
			}
			r.FinishedAtUnixNano = ev.FinishedAtUnixNano
			r.LastTermination = &pb.Termination{
				ContainerId: ev.ContainerId, ExitCode: ev.ExitCode, Reason: ev.Reason, Message: ev.Message,
				StartedAtUnixNano: r.StartedAtUnixNano, FinishedAtUnixNano: ev.FinishedAtUnixNano,
			}
		}
	case *pb.Event_BackOffStarted:
		ev := e.BackOffStarted
		r := s.container(ev.Name)
		r.BackoffUntilUnixNano = ev.UntilUnixNano
		r.NextBackoffNanos = ev.NextBackoffNanos
		if ev.Reason != "" {
			r.WaitingReason = ev.Reason
			r.WaitingMessage = ev.Message
		}
	case *pb.Event_ContainerRemoved:
		ev := e.ContainerRemoved
		r := s.container(ev.Name)
		r.DeadIds = slices.DeleteFunc(r.DeadIds, func(id string) bool { return id == ev.ContainerId })
	case *pb.Event_PodTerminating:
		ev := e.PodTerminating
		s.P.Terminating = true
		s.P.GracePeriodNanos = ev.GracePeriodNanos
		s.P.TerminationDeadlineUnixNano = ev.DeadlineUnixNano
		if ev.Reason != "" {
			s.P.Reason = ev.Reason
		}
	case *pb.Event_SandboxStopped:
		ev := e.SandboxStopped
		for _, sb := range s.Sandboxes() {
			if sb.Id == ev.SandboxId && sb.Phase != pb.SandboxPhase_SANDBOX_REMOVED {
				sb.Phase = pb.SandboxPhase_SANDBOX_STOPPED
			}
		}
	case *pb.Event_SandboxRemoved:
		ev := e.SandboxRemoved
		for _, sb := range s.Sandboxes() {
			if sb.Id == ev.SandboxId {
				sb.Phase = pb.SandboxPhase_SANDBOX_REMOVED
			}
		}
		s.P.OldSandboxes = slices.DeleteFunc(s.P.OldSandboxes, func(sb *pb.SandboxRecord) bool {
			return sb.Phase == pb.SandboxPhase_SANDBOX_REMOVED
		})
		if sb := s.P.Sandbox; sb != nil && sb.Id == ev.SandboxId {
			// Containers go with their sandbox.
			for _, r := range s.P.Containers {
				r.DeadIds = nil
				if r.Phase != pb.ContainerPhase_CONTAINER_EXITED {
					r.Id = ""
				}
			}
		}
	case *pb.Event_ActiveDeadlineExceeded:
		ev := e.ActiveDeadlineExceeded
		s.P.DeadlineExceeded = true
		s.P.KillDeadlineUnixNano = ev.DeadlineUnixNano
		s.P.FailReason, s.P.FailMessage = ev.Reason, ev.Message
	case *pb.Event_PodEvicted:
		ev := e.PodEvicted
		s.P.DeadlineExceeded, s.P.Evicted = true, true
		s.P.KillDeadlineUnixNano = ev.DeadlineUnixNano
		s.P.FailReason, s.P.FailMessage = ev.Reason, ev.Message
	case *pb.Event_PodUpdated:
		applyPodUpdated(s, e.PodUpdated)
	case *pb.Event_PodResizePending:
		applyPodResizePending(s, e.PodResizePending, at)
	case *pb.Event_PodResizeAllocated:
		applyPodResizeAllocated(s, e.PodResizeAllocated, at)
	case *pb.Event_ContainerResized:
		applyContainerResized(s, e.ContainerResized)
	case *pb.Event_ContainerResizeFailed:
		applyContainerResizeFailed(s, e.ContainerResizeFailed)
	case *pb.Event_ContainerResizeRestarting:
		applyContainerResizeRestarting(s, e.ContainerResizeRestarting)
	case *pb.Event_PodResizeCompleted:
		applyPodResizeCompleted(s)
	case *pb.Event_PodInitialized:
		s.P.InitializedSandbox = e.PodInitialized.SandboxId
	case *pb.Event_ProbeChanged:
		applyProbe(s, e.ProbeChanged)
	case *pb.Event_HookFailed:
		applyHookFailed(s, e.HookFailed)
	case *pb.Event_HookRequested:
		applyHookRequested(s, e.HookRequested)
	case *pb.Event_HookDecided:
		applyHookDecided(s, e.HookDecided, at)
	case *pb.Event_PodTerminated:
		s.P.Terminated = true
		s.P.FinalPhase = e.PodTerminated.Phase
	case *pb.Event_PodRemoved:
		s.P.Removed = true
	case *pb.Event_PodCleanedUp:
		s.P.CleanedUp = true
	}
}

// Sandboxes returns the current sandbox record (if any), then the old ones.
func (s *State) Sandboxes() []*pb.SandboxRecord {
	out := make([]*pb.SandboxRecord, 0, 1+len(s.P.OldSandboxes))
	if s.P.Sandbox != nil {
		out = append(out, s.P.Sandbox)
	}
	return append(out, s.P.OldSandboxes...)
}
