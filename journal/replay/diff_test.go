package replay

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal/replay/replaytest"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestDiffMessagesNamesFields(t *testing.T) {
	a := replaytest.Fold("u", replaytest.History(t, "u", "default", "p"))
	b := replaytest.Fold("u", replaytest.History(t, "u", "default", "p"))
	if d := diffMessages("", a.ProtoReflect(), b.ProtoReflect()); d != nil {
		t.Fatalf("equal states differ: %v", d)
	}
	b.Containers["app"].RestartCount = 7
	b.Containers["web"] = &pb.ContainerRecord{Name: "web"}
	b.Sandbox = nil
	b.Containers["app"].DeadIds = append(b.Containers["app"].DeadIds, "x")
	got := diffMessages("", a.ProtoReflect(), b.ProtoReflect())
	want := []fieldDiff{
		{"sandbox", "<set>", absent},
		{"containers[app].restart_count", "1", "7"},
		{"containers[app].dead_ids[1]", absent, `"x"`},
		{"containers[web]", absent, "<set>"},
	}
	if len(got) != len(want) {
		t.Fatalf("diff %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("diff %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// The folded state is compared with the state its snapshot restores,
// status included: a state whose decoded spec is not its pod_json (which
// Apply never produces) diverges in the derived status.
func TestLastSnapshotComparesTheDerivedStatus(t *testing.T) {
	events := replaytest.History(t, "u", "default", "p")
	st := lifecycle.NewState("u")
	for _, env := range events {
		lifecycle.Apply(st, env)
	}
	f := folder{pod: Pod{UID: "u"}}
	f.lastSnapshot(st, replaytest.T0)
	if f.pod.Divergences != nil || f.pod.Snapshots != 1 {
		t.Fatalf("a folded state against its own snapshot: %+v", f.pod)
	}

	lossy := st.Clone()
	pod := lossy.Pod.DeepCopy()
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "side", Image: "side:1"})
	lossy.Pod = pod
	f = folder{pod: Pod{UID: "u"}}
	f.lastSnapshot(lossy, replaytest.T0)
	found := false
	for _, d := range f.pod.Divergences {
		if d.Field == "status.containerStatuses[1]" && d.Stored == absent {
			found = true
		}
	}
	if !found {
		b, _ := json.MarshalIndent(f.pod.Divergences, "", " ")
		t.Fatalf("no divergence of status.containerStatuses[1]: %s", b)
	}
}
