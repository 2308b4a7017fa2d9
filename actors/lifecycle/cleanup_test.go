package lifecycle_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestCleanUpPublishing: a removed pod's status goes out with PodRemoved,
// not again with PodCleanedUp, which finishes the pod; but a Driver that
// never published the pod (recovered from a journal ending at PodRemoved)
// publishes it with the outcome, so that the removal is told in that
// process too (the status writer deletes the API object on it).
func TestCleanUpPublishing(t *testing.T) {
	grace := int64(30)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "default", UID: "uid-1",
			DeletionTimestamp: &metav1.Time{Time: t0}, DeletionGracePeriodSeconds: &grace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example/app:1"}}}}
	b, err := jsonMarshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	cfg, retry := lifecycle.DefaultConfig(), lifecycle.Retry{Min: 100 * time.Millisecond, Max: 10 * time.Second}
	view := &pb.RuntimeObserved{PodUid: "uid-1", Complete: true}
	cleanedUp := func(d *lifecycle.Driver) lifecycle.Work {
		t.Helper()
		w := d.Advance(d.Step(view, t0), nil)
		if len(w.Run) != 1 || w.Run[0].Effect != (lifecycle.CleanUpPod{}) {
			t.Fatalf("after the view: run %v, want CleanUpPod", w.Run)
		}
		rd, _ := d.Done(lifecycle.CleanUpPod{}, &pb.EffectResult{Key: lifecycle.CleanUpPod{}.Key()}, nil, false, t0)
		if len(rd.Events) != 1 || rd.Events[0].GetEvent().GetPodCleanedUp() == nil {
			t.Fatalf("the clean-up's outcome journals %v, want PodCleanedUp", rd.Events)
		}
		return d.Advance(rd, nil)
	}

	d := lifecycle.NewDriver(cfg, retry, lifecycle.NewState("uid-1"))
	rd := d.Step(&pb.PodDesired{PodJson: b, Source: "api"}, t0)
	journal := rd.Events
	w := d.Advance(rd, nil)
	if !d.State().P.Removed || !w.Publish || w.Finish || len(w.Run) != 0 {
		t.Fatalf("at PodRemoved: removed %v, publish %v, finish %v, run %v; want removed and published, not finished, nothing run before a view",
			d.State().P.Removed, w.Publish, w.Finish, w.Run)
	}
	if w := cleanedUp(d); !w.Finish || w.Publish {
		t.Fatalf("at PodCleanedUp: finish %v, publish %v; want finished, not published again", w.Finish, w.Publish)
	}

	st := lifecycle.NewState("uid-1")
	for _, env := range journal {
		lifecycle.Apply(st, env)
	}
	if st.Done() || !st.CleanUpPending() {
		t.Fatalf("a journal ending at PodRemoved: done %v, clean-up pending %v", st.Done(), st.CleanUpPending())
	}
	if w := cleanedUp(lifecycle.NewDriver(cfg, retry, st)); !w.Finish || !w.Publish {
		t.Fatalf("recovered, at PodCleanedUp: finish %v, publish %v; want both", w.Finish, w.Publish)
	}
}
