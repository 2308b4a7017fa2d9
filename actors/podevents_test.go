package actors

import (
	"testing"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A start the runtime's view adopted while this incarnation's own start
// was on its way is recorded as a start (the Started event), not a
// recovery; the journal's events stay as they are.
func TestOwnedHereRecordsRacedStartsAsStarts(t *testing.T) {
	a := newPodActor(t.Context(), "uid", &Deps{}, nil, nil, withView)
	a.startedHere = map[string]bool{
		lifecycle.StartContainer{ID: "c1"}.Key():                 true,
		lifecycle.CreateContainer{Name: "app", Attempt: 2}.Key(): true,
	}
	journaled := []*pb.Envelope{
		{Event: &pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app", Attempt: 2, Recovered: true}}}},
		{Event: &pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{ContainerId: "c1", Recovered: true}}}},
		{Event: &pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{ContainerId: "c0", Recovered: true}}}},
	}
	got := a.ownedHere(journaled)
	if got[0].GetEvent().GetContainerCreated().Recovered || got[1].GetEvent().GetContainerStarted().Recovered {
		t.Fatalf("raced create/start still marked recovered: %v", got)
	}
	if !got[2].GetEvent().GetContainerStarted().Recovered {
		t.Fatal("a start of an earlier incarnation lost its Recovered mark")
	}
	if !journaled[0].GetEvent().GetContainerCreated().Recovered || !journaled[1].GetEvent().GetContainerStarted().Recovered {
		t.Fatal("the journaled events were changed")
	}
	if len(a.startedHere) != 0 {
		t.Fatalf("keys left behind: %v", a.startedHere)
	}
}
