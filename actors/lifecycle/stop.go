package lifecycle

import (
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Reasons of ContainerStopRequested.
const (
	// StopTerminating: the pod is terminating (deleted, removed, evicted,
	// past its deadline) or finished with a container left running.
	StopTerminating = "Terminating"
)

// stop adds the StopContainer of r's container (ID r.Id), after its
// write-ahead intent, ContainerStopRequested, is journaled the first time
// for that container ID. The intent is what makes the stop's visible parts
// happen at most once: the Driver hands out the stop fresh only in the
// incarnation that journaled the intent, and only a fresh stop runs the
// container's PreStop hook; the Killing event is recorded from the intent.
func (d *decider) stop(fx *effects, r *pb.ContainerRecord, grace time.Duration, reason string) {
	if r.StopRequestedId != r.Id {
		d.emit(&pb.Event{Kind: &pb.Event_ContainerStopRequested{ContainerStopRequested: &pb.ContainerStopRequested{
			Name: r.Name, Attempt: r.Attempt, ContainerId: r.Id, GracePeriodNanos: int64(grace), Reason: reason}}})
	}
	fx.add(StopContainer{Name: r.Name, Attempt: r.Attempt, ID: r.Id, Grace: grace})
}
