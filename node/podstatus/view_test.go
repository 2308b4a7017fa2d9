package podstatus

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestCacheBuildsStatusFromView: an update with a view is served with the
// status built from the view (the update's Status, read for the metrics
// only, is left out here to tell the two apart).
func TestCacheBuildsStatusFromView(t *testing.T) {
	c, _, _ := newTestCache(t)
	spec := pod("ns", "a", "", "c")
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	st := lifecycle.DefaultConfig().Decide(lifecycle.NewState("uid-a"), &pb.PodDesired{PodJson: b, Source: "file"}, t0).State
	env := lifecycle.StatusEnv{RuntimeName: "sim", HostIP: "10.0.0.9", Now: t0}
	want := lifecycle.Status(st, env)
	if want.Phase != corev1.PodPending || len(want.Conditions) == 0 {
		t.Fatalf("test set-up: the accepted pod's status is %+v", want)
	}

	c.PodStatus(actors.PodUpdate{UID: "uid-a", Pod: st.Pod, View: lifecycle.ViewStatus(st, env), Seq: st.P.Seq})
	got, ok := c.Get("uid-a")
	if !ok {
		t.Fatal("Get: no pod")
	}
	if !apiequality.Semantic.DeepEqual(got.Status, want) {
		t.Fatalf("Get's status:\n%+v\nwant the view's:\n%+v", got.Status, want)
	}
	listed := c.List()
	if len(listed) != 1 || !apiequality.Semantic.DeepEqual(listed[0].Status, want) {
		t.Fatalf("List: %+v, want one pod with the view's status", listed)
	}
}
