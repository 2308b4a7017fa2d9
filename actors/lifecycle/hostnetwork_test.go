package lifecycle_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A host-network pod has the node's IP, however its sandbox was adopted
// (the runtime reports no IP for it): the runtime's view can record the
// sandbox before the RunSandbox result does.
func TestHostNetworkPodHasTheNodesIP(t *testing.T) {
	cfg := lifecycle.DefaultConfig()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "app", Image: "img:1"}}}}
	b, err := jsonMarshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	s := lifecycle.NewState("uid-1")
	s = cfg.Decide(s, &pb.PodDesired{PodJson: b, Source: "file"}, t0).State
	s = cfg.Decide(s, &pb.RuntimeObserved{PodUid: "uid-1", Complete: true, ListedAtUnixNano: t0.UnixNano(),
		Sandboxes: []*pb.ObservedSandbox{{Id: "sb1", Attempt: 1, Ready: true}}}, t0).State
	st := lifecycle.Status(s, lifecycle.StatusEnv{HostIP: "192.0.2.7", Now: t0})
	if st.PodIP != "192.0.2.7" || len(st.PodIPs) != 1 || st.PodIPs[0].IP != "192.0.2.7" {
		t.Fatalf("podIP %q %v, want the node's 192.0.2.7", st.PodIP, st.PodIPs)
	}
}
