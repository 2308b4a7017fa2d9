package replay

import (
	"fmt"
	"strconv"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// misfit is an event that does not fit the state it is folded into: the
// state's field holds folded, the event says stored.
type misfit struct {
	field, folded, stored, detail string
}

// fit checks that env fits s, the state folded from the events before it:
// that lifecycle.Apply will fold it rather than pass over it. Apply passes
// over an event that names a sandbox attempt, container attempt or
// container ID other than the state's, or that finds the container in a
// phase the event cannot follow; its contract says that happens only in a
// damaged journal. Events that Apply folds unconditionally, or that it may
// legitimately pass over (a probe result or a hook failure for a container
// already replaced), are not checked.
func fit(s *lifecycle.State, env *pb.Envelope) *misfit {
	name := env.GetEvent().Name()
	switch e := env.GetEvent().GetKind().(type) {
	case *pb.Event_SandboxCreated:
		return sandboxAttempt(s, e.SandboxCreated.Attempt, name)
	case *pb.Event_SandboxFailed:
		return sandboxAttempt(s, e.SandboxFailed.Attempt, name)
	case *pb.Event_SandboxLost:
		sb := s.P.Sandbox
		if sb == nil {
			return &misfit{"sandbox", absent, strconv.Quote(e.SandboxLost.SandboxId), name + " for a pod without a sandbox"}
		}
		if sb.Id != e.SandboxLost.SandboxId {
			return &misfit{"sandbox.id", strconv.Quote(sb.Id), strconv.Quote(e.SandboxLost.SandboxId), name + " names another sandbox"}
		}
	case *pb.Event_SandboxStopped:
		return knownSandbox(s, e.SandboxStopped.SandboxId, name)
	case *pb.Event_SandboxRemoved:
		return knownSandbox(s, e.SandboxRemoved.SandboxId, name)
	case *pb.Event_ContainerCreated:
		ev := e.ContainerCreated
		r := s.P.Containers[ev.Name]
		if m := containerAttempt(r, ev.Name, ev.Attempt, name); m != nil {
			return m
		}
		if r.Phase != pb.ContainerPhase_CONTAINER_REQUESTED {
			return &misfit{containerField(ev.Name, "phase"), r.Phase.String(), pb.ContainerPhase_CONTAINER_REQUESTED.String(),
				name + " follows a container that was not requested"}
		}
	case *pb.Event_ContainerFailed:
		ev := e.ContainerFailed
		return containerAttempt(s.P.Containers[ev.Name], ev.Name, ev.Attempt, name)
	case *pb.Event_ContainerStarted:
		ev := e.ContainerStarted
		r := s.P.Containers[ev.Name]
		if m := containerID(r, ev.Name, ev.ContainerId, name); m != nil {
			return m
		}
		if r.Phase != pb.ContainerPhase_CONTAINER_CREATED {
			return &misfit{containerField(ev.Name, "phase"), r.Phase.String(), pb.ContainerPhase_CONTAINER_CREATED.String(),
				name + " follows a container that was not created"}
		}
	case *pb.Event_ContainerExited:
		ev := e.ContainerExited
		r := s.P.Containers[ev.Name]
		if m := containerID(r, ev.Name, ev.ContainerId, name); m != nil {
			return m
		}
		if r.Phase == pb.ContainerPhase_CONTAINER_EXITED {
			return &misfit{containerField(ev.Name, "phase"), r.Phase.String(), "running or created",
				name + " for a container that already exited"}
		}
	}
	return nil
}

func sandboxAttempt(s *lifecycle.State, attempt uint32, event string) *misfit {
	sb := s.P.Sandbox
	if sb == nil {
		return &misfit{"sandbox", absent, fmt.Sprintf("attempt %d", attempt), event + " for a sandbox that was never requested"}
	}
	if sb.Attempt != attempt {
		return &misfit{"sandbox.attempt", fmt.Sprint(sb.Attempt), fmt.Sprint(attempt), event + " names another sandbox attempt"}
	}
	return nil
}

// knownSandbox checks that a sandbox event names the current sandbox or an
// old one the state still holds.
func knownSandbox(s *lifecycle.State, id, event string) *misfit {
	for _, sb := range s.Sandboxes() {
		if sb.Id == id {
			return nil
		}
	}
	current := absent
	if sb := s.P.Sandbox; sb != nil {
		current = strconv.Quote(sb.Id)
	}
	return &misfit{"sandbox.id", current, strconv.Quote(id), event + " names a sandbox the state does not hold"}
}

func containerAttempt(r *pb.ContainerRecord, container string, attempt uint32, event string) *misfit {
	if r == nil {
		return &misfit{containerField(container, ""), absent, fmt.Sprintf("attempt %d", attempt), event + " for a container that was never requested"}
	}
	if r.Attempt != attempt {
		return &misfit{containerField(container, "attempt"), fmt.Sprint(r.Attempt), fmt.Sprint(attempt), event + " names another attempt"}
	}
	return nil
}

func containerID(r *pb.ContainerRecord, container, id, event string) *misfit {
	if r == nil {
		return &misfit{containerField(container, ""), absent, strconv.Quote(id), event + " for a container that was never requested"}
	}
	if r.Id != id {
		return &misfit{containerField(container, "id"), strconv.Quote(r.Id), strconv.Quote(id), event + " names another container ID"}
	}
	return nil
}

func containerField(container, field string) string {
	p := fmt.Sprintf("containers[%s]", container)
	if field == "" {
		return p
	}
	return p + "." + field
}
