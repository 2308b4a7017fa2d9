package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Restore rebuilds a pod's state from its snapshot (nil if none) and the
// events after it: the same fold the live run did.
func Restore(uid string, snap *pb.Snapshot, events []*pb.Envelope) (*lifecycle.State, error) {
	st := lifecycle.NewState(uid)
	if snap != nil && snap.State != nil {
		var err error
		if st, err = lifecycle.FromSnapshot(snap.State); err != nil {
			return nil, err
		}
		st.P.Seq = snap.Seq
	}
	for _, env := range events {
		if env.Seq != st.P.Seq+1 {
			return nil, fmt.Errorf("pod %s: event seq %d follows %d", uid, env.Seq, st.P.Seq)
		}
		lifecycle.Apply(st, env)
	}
	return st, nil
}

// Observed converts a runtime view into the core's input.
func Observed(uid string, v *cri.PodView) *pb.RuntimeObserved {
	obs := &pb.RuntimeObserved{PodUid: uid, Complete: true}
	if v == nil {
		return obs
	}
	if !v.ListedAt.IsZero() {
		obs.ListedAtUnixNano = v.ListedAt.UnixNano()
	}
	obs.ListedEpoch, obs.ReturnedEpoch = v.Epoch, v.Returned
	for _, sb := range v.Sandboxes {
		obs.Sandboxes = append(obs.Sandboxes, &pb.ObservedSandbox{Id: sb.ID, Attempt: sb.Attempt, Ready: sb.Ready, Ip: sb.IP})
	}
	for _, c := range v.Containers {
		oc := &pb.ObservedContainer{
			Id: c.ID, SandboxId: c.SandboxID, Name: c.Name, Attempt: c.Attempt,
			ExitCode: c.ExitCode, Reason: c.Reason, Message: c.Message, ImageRef: c.ImageRef,
			RestartCount: c.RestartCount,
		}
		switch c.State {
		case cri.ContainerCreated:
			oc.State = pb.ObservedState_OBSERVED_CREATED
		case cri.ContainerRunning:
			oc.State = pb.ObservedState_OBSERVED_RUNNING
		case cri.ContainerExited:
			oc.State = pb.ObservedState_OBSERVED_EXITED
		}
		if !c.StartedAt.IsZero() {
			oc.StartedAtUnixNano = c.StartedAt.UnixNano()
		}
		if !c.FinishedAt.IsZero() {
			oc.FinishedAtUnixNano = c.FinishedAt.UnixNano()
		}
		obs.Containers = append(obs.Containers, oc)
	}
	return obs
}

// CRILister lists a pod's runtime objects through a cri.Client.
type CRILister struct {
	Client interface {
		ListPod(ctx context.Context, podUID string) (*cri.PodView, error)
	}
	// Epochs number the listings (nil: not numbered).
	Epochs *cri.Epochs
}

// ListPodObserved implements Lister.
func (l CRILister) ListPodObserved(ctx context.Context, uid string) (*pb.RuntimeObserved, error) {
	epoch := l.Epochs.Next()
	v, err := l.Client.ListPod(ctx, uid)
	if err != nil {
		return nil, err
	}
	obs := Observed(uid, v)
	obs.ListedEpoch, obs.ReturnedEpoch = epoch, l.Epochs.Now()
	return obs, nil
}

// KnownObjects describes the runtime objects the journal knows, with the
// state it last recorded, so that the recovery listing asks the runtime only
// about what changed while the node was down (cri.Client.ListPodsKnown).
func KnownObjects(states map[string]*lifecycle.State) *cri.Known {
	k := &cri.Known{Sandboxes: map[string]cri.Sandbox{}, Containers: map[string]cri.Container{}}
	for _, st := range states {
		p := st.P
		sandboxID := ""
		for _, sb := range st.Sandboxes() {
			if sb.Id == "" {
				continue
			}
			switch sb.Phase {
			case pb.SandboxPhase_SANDBOX_READY:
				k.Sandboxes[sb.Id] = cri.Sandbox{ID: sb.Id, Attempt: sb.Attempt, Ready: true, IP: sb.Ip}
			case pb.SandboxPhase_SANDBOX_STOPPED:
				k.Sandboxes[sb.Id] = cri.Sandbox{ID: sb.Id, Attempt: sb.Attempt, IP: sb.Ip}
			}
			if sb == p.Sandbox {
				sandboxID = sb.Id
			}
		}
		for name, r := range p.Containers {
			if r.Id == "" || sandboxID == "" {
				continue
			}
			c := cri.Container{ID: r.Id, SandboxID: sandboxID, Name: name, Attempt: r.Attempt, ImageRef: r.ImageRef}
			switch r.Phase {
			case pb.ContainerPhase_CONTAINER_CREATED:
				c.State = cri.ContainerCreated
			case pb.ContainerPhase_CONTAINER_RUNNING:
				c.State = cri.ContainerRunning
				c.StartedAt = time.Unix(0, r.StartedAtUnixNano)
			case pb.ContainerPhase_CONTAINER_EXITED:
				c.State = cri.ContainerExited
				c.ExitCode, c.Reason, c.Message = r.ExitCode, r.Reason, r.Message
				c.StartedAt, c.FinishedAt = time.Unix(0, r.StartedAtUnixNano), time.Unix(0, r.FinishedAtUnixNano)
			default:
				continue
			}
			k.Containers[r.Id] = c
		}
	}
	return k
}
