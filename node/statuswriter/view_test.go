package statuswriter_test

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// An update with a view and no status is written with the status the view
// builds: the Writer keeps the view, not a status, for each pod.
func TestWriterWritesTheViewsStatus(t *testing.T) {
	spec := apiPod("web", "uid-1")
	spec.Spec.Containers = []corev1.Container{{Name: "c", Image: "img"}}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	st := lifecycle.DefaultConfig().Decide(lifecycle.NewState("uid-1"), &pb.PodDesired{PodJson: b, Source: "api"}, now).State
	env := lifecycle.StatusEnv{RuntimeName: "sim", HostIP: "10.0.0.9", Now: now}
	want := lifecycle.Status(st, env)
	if want.Phase != corev1.PodPending || want.HostIP != "10.0.0.9" {
		t.Fatalf("test set-up: the accepted pod's status is %+v", want)
	}

	f := newFixture(t, apiPod("web", "uid-1"))
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: st.Pod, View: lifecycle.ViewStatus(st, env), Seq: st.P.Seq})
	f.run()
	eventually(t, "web's status written", func() bool { return f.pod("web").Status.HostIP == "10.0.0.9" })
	if got := f.pod("web").Status; got.Phase != want.Phase || len(got.Conditions) != len(want.Conditions) {
		t.Fatalf("written status %+v, want the view's %+v", got, want)
	}
}
