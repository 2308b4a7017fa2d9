package lifecycle_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestActiveDeadline drives one pod to a point, then lets time pass, and
// checks the phase, the reason and whether the deadline timer is armed.
func TestActiveDeadline(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	never := corev1.RestartPolicyNever
	tests := []struct {
		name     string
		deadline *int64
		policy   corev1.RestartPolicy
		exit     bool          // the container exits 0 before time passes
		after    time.Duration // since acceptance
		phase    corev1.PodPhase
		reason   string
		timer    bool // a Tick is asked for at the deadline
	}{
		{name: "no deadline", after: time.Hour, phase: corev1.PodRunning},
		{name: "before the deadline", deadline: secs(60), after: 59 * time.Second, phase: corev1.PodRunning, timer: true},
		{name: "at the deadline", deadline: secs(60), after: 60 * time.Second, phase: corev1.PodFailed, reason: lifecycle.ReasonDeadlineExceeded},
		{name: "long past it (actorlet was down)", deadline: secs(60), after: time.Hour, phase: corev1.PodFailed, reason: lifecycle.ReasonDeadlineExceeded},
		{name: "zero seconds", deadline: secs(0), after: 0, phase: corev1.PodFailed, reason: lifecycle.ReasonDeadlineExceeded},
		{name: "finished before it stays Succeeded", deadline: secs(60), policy: never, exit: true, after: time.Hour, phase: corev1.PodSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := lifecycle.DefaultConfig()
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace, pod.UID = "p", "default", "uid-1"
			pod.Spec.ActiveDeadlineSeconds = tt.deadline
			pod.Spec.RestartPolicy = tt.policy
			pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "img:1"}}
			b, err := jsonMarshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			s := lifecycle.NewState("uid-1")
			step := func(in lifecycle.Input, now time.Time) lifecycle.Decision {
				dec := cfg.Decide(s, in, now)
				s = dec.State
				return dec
			}
			step(&pb.PodDesired{PodJson: b, Source: "file"}, t0)
			step(&pb.EffectResult{Key: "runsandbox/1", Id: "sb1", Ip: "10.0.0.2"}, t0)
			step(&pb.EffectResult{Key: "pull/app/1", ImageRef: "sha256:aa"}, t0)
			step(&pb.EffectResult{Key: "create/app/1", Id: "c1"}, t0)
			step(&pb.EffectResult{Key: "start/c1", StartedAtUnixNano: t0.UnixNano()}, t0)
			if tt.exit {
				step(&pb.EffectResult{Key: "stop/c1", ExitCode: 0, FinishedAtUnixNano: t0.UnixNano()}, t0)
			}
			now := t0.Add(tt.after)
			dec := step(&pb.Tick{}, now)

			st := lifecycle.Status(s, lifecycle.StatusEnv{Now: now})
			if st.Phase != tt.phase || st.Reason != tt.reason {
				t.Errorf("phase=%s reason=%q, want phase=%s reason=%q", st.Phase, st.Reason, tt.phase, tt.reason)
			}
			if tt.reason != "" && st.Message != lifecycle.MessageDeadlineExceeded {
				t.Errorf("message = %q", st.Message)
			}
			armed := false
			for _, e := range dec.Effects {
				if at, ok := e.(lifecycle.ArmTimer); ok && at.At.Equal(t0.Add(60*time.Second)) {
					armed = true
				}
			}
			if armed != tt.timer {
				t.Errorf("timer at the deadline armed=%v, want %v (effects %v)", armed, tt.timer, dec.Effects)
			}
		})
	}
}
