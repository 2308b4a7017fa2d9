package lifecycle_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestHookTriesRunAtMostOnce drives a pod with lifecycle hooks at random
// stages through random histories (random verdicts, lost results, exits,
// removal, kill -9) and checks after every step: each try (RunHook key) is
// handed out only by the incarnation that journaled its HookRequested and
// called at most once over all incarnations; replaying the journal gives
// the live state; the runtime never holds two ready sandboxes or a
// container started twice.
func TestHookTriesRunAtMostOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := lifecycle.DefaultConfig()
		var stages []lifecycle.Stage
		for _, st := range lifecycle.Stages() {
			if rapid.Bool().Draw(t, "hook at "+st.String()) {
				stages = append(stages, st)
			}
		}
		cfg.HookStages = lifecycle.StagesOf(stages...)
		now := t0
		m := &model{t: t, sandboxes: map[string]*pb.ObservedSandbox{}, containers: map[string]*pb.ObservedContainer{}, started: map[string]int{}, sidecars: map[string]bool{}}
		state := lifecycle.NewState("uid-1")
		var journal []*pb.Envelope
		var pending []lifecycle.Effect
		requestedHere := map[string]bool{} // RunHook keys journaled by this incarnation
		called := map[string]int{}
		// A hook's verdict not seen yet: the call is in flight (the actor
		// does not hand it out again); it arrives late, or never.
		inflight := map[string]bool{}
		var late []*pb.EffectResult

		pod := &corev1.Pod{}
		pod.Name, pod.Namespace, pod.UID = "p", "default", "uid-1"
		pod.Spec.RestartPolicy = rapid.SampledFrom([]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyNever}).Draw(t, "policy")
		for i := range rapid.IntRange(1, 2).Draw(t, "containers") {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "img:1"})
		}
		podJSON, _ := jsonMarshal(pod)

		step := func(in lifecycle.Input) {
			dec := cfg.Decide(state, in, now)
			for _, env := range dec.Events {
				if want := uint64(len(journal) + 1); env.Seq != want {
					t.Fatalf("event seq %d, want %d", env.Seq, want)
				}
				journal = append(journal, env)
				if r := env.GetEvent().GetHookRequested(); r != nil {
					st, err := lifecycle.ParseStage(r.Stage)
					if err != nil {
						t.Fatal(err)
					}
					requestedHere[lifecycle.RunHook{Stage: st, Container: r.Container, Attempt: r.Attempt, Try: r.Try}.Key()] = true
				}
			}
			state = dec.State
			pending = dec.Effects
			for _, e := range pending {
				if _, ok := e.(lifecycle.RunHook); ok && !requestedHere[e.Key()] {
					t.Fatalf("%v handed out by an incarnation that did not journal its intent", e)
				}
			}
			replayed := lifecycle.NewState("uid-1")
			for _, env := range journal {
				lifecycle.Apply(replayed, env)
			}
			if !proto.Equal(replayed.P, state.P) {
				t.Fatalf("replayed state differs from live state:\nlive:   %v\nreplay: %v", state.P, replayed.P)
			}
			checkJournalReplay(t, journal)
		}

		step(&pb.PodDesired{PodJson: podJSON, Source: "file"})
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "action") {
			case 0, 1, 2, 3: // carry out one outstanding effect
				var work []lifecycle.Effect
				for _, e := range pending {
					if _, ok := e.(lifecycle.ArmTimer); !ok && !inflight[e.Key()] {
						work = append(work, e)
					}
				}
				if len(work) == 0 {
					continue
				}
				e := work[rapid.IntRange(0, len(work)-1).Draw(t, "effect")]
				var res *pb.EffectResult
				if h, ok := e.(lifecycle.RunHook); ok {
					if called[h.Key()]++; called[h.Key()] > 1 {
						t.Fatalf("%v called %d times", h, called[h.Key()])
					}
					res = &pb.EffectResult{Key: h.Key()}
					res.HookAction = string(rapid.SampledFrom([]lifecycle.Action{lifecycle.ActionContinue, lifecycle.ActionContinue,
						lifecycle.ActionDelay, lifecycle.ActionVeto}).Draw(t, "verdict"))
					res.HookRetryAfterNanos = int64(time.Duration(rapid.IntRange(0, 60).Draw(t, "delay secs")) * time.Second)
				} else {
					res = m.do(e, now)
				}
				if rapid.Bool().Draw(t, "result lost") {
					if _, hook := e.(lifecycle.RunHook); hook {
						inflight[e.Key()] = true
						late = append(late, res)
					}
					continue // not seen yet (a hook's), or a crash before it was seen
				}
				step(res)
			case 4: // the runtime lists the pod, or a hook's verdict arrives late
				if len(late) > 0 && rapid.Bool().Draw(t, "late verdict?") {
					i := rapid.IntRange(0, len(late)-1).Draw(t, "late")
					res := late[i]
					late = append(late[:i], late[i+1:]...)
					delete(inflight, res.Key)
					step(res)
					continue
				}
				step(m.view(now))
			case 5: // a running container exits
				for _, id := range sortedKeys(m.containers) {
					if c := m.containers[id]; c.State == pb.ObservedState_OBSERVED_RUNNING {
						m.exit(c, int32(rapid.IntRange(0, 1).Draw(t, "code")), now)
						break
					}
				}
			case 6: // time passes
				now = now.Add(time.Duration(rapid.IntRange(1, 400).Draw(t, "secs")) * time.Second)
				step(&pb.Tick{})
			case 7: // kill -9: only the journal survives, then recovery lists the runtime
				state = lifecycle.NewState("uid-1")
				for _, env := range journal {
					lifecycle.Apply(state, env)
				}
				requestedHere = map[string]bool{}
				clear(inflight) // a new incarnation; the old one's calls may still answer (late)
				step(m.view(now))
			case 8:
				if rapid.IntRange(0, 5).Draw(t, "remove?") == 0 {
					step(&pb.PodUndesired{Reason: "Removed"})
				}
			case 9:
				step(&pb.Tick{})
			}
			m.check(t)
		}
	})
}
