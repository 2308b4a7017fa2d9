package lifecycle

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestSpecJSONIsTheJournaledBytes: a pod accepted and updated from a
// source keeps its spec decoded only (P.PodJson nil), yet SpecJSON and
// Snapshot give the journaled pod_json byte for byte, a snapshot restores
// the same state, and a replay folds the same state; the spec offered
// again as journaled decides nothing.
func TestSpecJSONIsTheJournaledBytes(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1",
		Annotations: map[string]string{"z": "1", "a": "2"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1"}}}}
	cfg := DefaultConfig()
	st := NewState("uid-1")
	var journal []*pb.Envelope
	var last []byte
	for _, image := range []string{"img:1", "img:2"} {
		pod.Spec.Containers[0].Image = image
		b, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		dec := cfg.Decide(st, &pb.PodDesired{PodJson: b, Source: "api"}, now)
		for _, env := range dec.Events {
			if a := env.GetEvent().GetPodAccepted(); a != nil {
				last = a.PodJson
			}
			if u := env.GetEvent().GetPodUpdated(); u != nil {
				last = u.PodJson
			}
		}
		journal = append(journal, dec.Events...)
		st = dec.State
		if st.P.PodJson != nil {
			t.Fatalf("image %s: the state holds the spec's JSON besides the decoded spec", image)
		}
		if !bytes.Equal(st.SpecJSON(), last) || !bytes.Equal(st.Snapshot().PodJson, last) {
			t.Fatalf("image %s: SpecJSON %s, Snapshot %s, want the journaled %s", image, st.SpecJSON(), st.Snapshot().PodJson, last)
		}
		if again := cfg.Decide(st, &pb.PodDesired{PodJson: last, Source: "api"}, now); len(again.Events) != 0 {
			t.Fatalf("image %s: the journaled spec offered again decided %v", image, again.Events)
		}
	}
	replayed := NewState("uid-1")
	for _, env := range journal {
		Apply(replayed, env)
	}
	if !proto.Equal(replayed.P, st.P) || !proto.Equal(replayed.Snapshot(), st.Snapshot()) {
		t.Fatalf("replayed state differs:\n%v\n%v", replayed.Snapshot(), st.Snapshot())
	}
	restored, err := FromSnapshot(st.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if restored.P.PodJson != nil || !proto.Equal(restored.Snapshot(), st.Snapshot()) {
		t.Fatalf("restored state differs:\n%v\n%v", restored.Snapshot(), st.Snapshot())
	}
}

// TestSpecJSONKeepsBytesItCannotEncode: journaled bytes that the decoded
// spec does not encode back to (written by hand: other key order, spaces)
// or that do not decode are held as they are, and given back unchanged.
func TestSpecJSONKeepsBytesItCannotEncode(t *testing.T) {
	for name, b := range map[string][]byte{
		"other form":    []byte(`{"spec": {"containers": [{"image": "img:1", "name": "app"}]}, "metadata": {"uid": "uid-1", "name": "web"}}`),
		"no pod at all": []byte(`{"metadata": 7}`),
	} {
		t.Run(name, func(t *testing.T) {
			st := NewState("uid-1")
			Apply(st, &pb.Envelope{Seq: 1, PodUid: "uid-1", Event: &pb.Event{Kind: &pb.Event_PodAccepted{
				PodAccepted: &pb.PodAccepted{PodJson: b, SpecDigest: "d", Source: "file"}}}})
			if !bytes.Equal(st.P.PodJson, b) || !bytes.Equal(st.SpecJSON(), b) || !bytes.Equal(st.Snapshot().PodJson, b) {
				t.Fatalf("P.PodJson %s, SpecJSON %s, Snapshot %s, want %s", st.P.PodJson, st.SpecJSON(), st.Snapshot().PodJson, b)
			}
		})
	}
}
