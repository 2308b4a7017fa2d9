package lifecycle_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestOfferSharesTheSourcesPod: a pod the source offers with its
// PodDesired (Driver.Offer) becomes the state's spec when it is what the
// PodDesired decodes to, and is left alone when it is not (here a time the
// JSON drops the nanoseconds of), and either way the decision, its events
// and its state are those of a Step without the offer.
func TestOfferSharesTheSourcesPod(t *testing.T) {
	base := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1", Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
	}
	inexact := base.DeepCopy()
	inexact.CreationTimestamp = metav1.NewTime(t0.Add(time.Nanosecond))
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		shared bool
	}{{"as decoded", base, true}, {"not as decoded", inexact, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := jsonMarshal(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			in := &pb.PodDesired{PodJson: b, Source: "file"}
			step := func(offer bool) (lifecycle.Ready, *lifecycle.State) {
				d := lifecycle.NewDriver(lifecycle.DefaultConfig(), lifecycle.Retry{}, lifecycle.NewState("uid-1"))
				if offer {
					d.Offer(in, tc.pod)
				}
				rd := d.Step(in, t0)
				d.Advance(rd, nil)
				return rd, d.State()
			}
			rd0, plain := step(false)
			rd1, offered := step(true)
			if plain.Pod == tc.pod {
				t.Fatal("without an offer the state holds the source's pod")
			}
			if got := offered.Pod == tc.pod; got != tc.shared {
				t.Fatalf("the state holds the source's pod: %v, want %v", got, tc.shared)
			}
			if len(rd0.Events) == 0 || len(rd0.Events) != len(rd1.Events) {
				t.Fatalf("events without the offer %d, with it %d", len(rd0.Events), len(rd1.Events))
			}
			for i := range rd0.Events {
				if !proto.Equal(rd0.Events[i], rd1.Events[i]) {
					t.Fatalf("event %d differs with the offer:\n%v\n%v", i, rd0.Events[i], rd1.Events[i])
				}
			}
			if !proto.Equal(plain.P, offered.P) {
				t.Fatalf("state differs with the offer:\n%v\n%v", plain.P, offered.P)
			}
		})
	}
}
