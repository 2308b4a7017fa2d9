package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestDesiredDecodesOnce: a source's pod accepted and then updated folds
// into the same state whether the fold reuses the pod Decide decoded (the
// journaled bytes are the input's: a pod without status) or decodes the
// journaled bytes (a pod with status, which the journal drops), and the
// same as a replay of the journal, which always decodes. The decision
// keeps no decoded pod around.
func TestDesiredDecodesOnce(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for name, withStatus := range map[string]bool{"no status": false, "with status": true} {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1"}}}}
			if withStatus {
				pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.9"}
			}
			cfg := DefaultConfig()
			st := NewState("uid-1")
			var journal []*pb.Envelope
			for _, image := range []string{"img:1", "img:2"} {
				pod.Spec.Containers[0].Image = image
				b, err := json.Marshal(pod)
				if err != nil {
					t.Fatal(err)
				}
				stored, _ := storedSpec(pod)
				if reused := string(stored) == string(b); reused == withStatus {
					t.Fatalf("journaled bytes equal to the input's: %v, want %v", reused, !withStatus)
				}
				dec := cfg.Decide(st, &pb.PodDesired{PodJson: b, Source: "api"}, now)
				if len(dec.Events) == 0 {
					t.Fatalf("image %s: no events", image)
				}
				if dec.State.decoded.pod != nil {
					t.Fatal("the decision keeps the decoded pod")
				}
				journal = append(journal, dec.Events...)
				st = dec.State
			}
			if got := st.Desired().Spec.Containers[0].Image; got != "img:2" {
				t.Fatalf("desired image %s, want img:2", got)
			}
			replayed := NewState("uid-1")
			for _, env := range journal {
				Apply(replayed, env)
			}
			if !apiequality.Semantic.DeepEqual(replayed.Pod, st.Pod) || !apiequality.Semantic.DeepEqual(replayed.Desired(), st.Desired()) {
				t.Fatalf("replayed pod differs from the decided one:\n%+v\n%+v", replayed.Pod, st.Pod)
			}
			if st.Pod.Status.Phase != "" {
				t.Fatalf("the state's pod has a status: %+v", st.Pod.Status)
			}
		})
	}
}
