package podevents

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestLifecycleHookVerdictEvents(t *testing.T) {
	pod := &corev1.Pod{}
	decided := func(h *pb.HookDecided) *pb.Event {
		return &pb.Event{Kind: &pb.Event_HookDecided{HookDecided: h}}
	}
	cases := []struct {
		ev   *pb.Event
		want []Event
	}{
		{decided(&pb.HookDecided{Stage: "Accepted", Action: "Veto", Reason: "NotHere", Message: "no"}),
			[]Event{{corev1.EventTypeWarning, "NotHere", "lifecycle hook vetoed Accepted: no", ""}}},
		{decided(&pb.HookDecided{Stage: "BeforeStart", Container: "app", Action: "Delay", Reason: "Wait"}),
			[]Event{{corev1.EventTypeNormal, "Wait", "lifecycle hook delayed BeforeStart of container app", "app"}}},
		{decided(&pb.HookDecided{Stage: "Terminated", Action: "Interrupted", Reason: "HookInterrupted", Message: "restarted"}),
			[]Event{{corev1.EventTypeWarning, "HookInterrupted", "lifecycle hook was interrupted at Terminated: restarted", ""}}},
		{decided(&pb.HookDecided{Stage: "Accepted", Action: "Continue"}), nil},
		{&pb.Event{Kind: &pb.Event_HookRequested{HookRequested: &pb.HookRequested{Stage: "Accepted", Try: 1}}}, nil},
	}
	for _, c := range cases {
		got := Translate(pod, c.ev)
		if len(got) != len(c.want) {
			t.Fatalf("%v: got %v, want %v", c.ev, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: got %+v, want %+v", c.ev, got[i], c.want[i])
			}
		}
	}
}
