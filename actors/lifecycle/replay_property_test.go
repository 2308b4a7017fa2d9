package lifecycle_test

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal/replay"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// model is a naive runtime that carries out the core's effects, so that the
// property test drives the core through realistic histories, including
// crashes that lose everything but the journal.
type model struct {
	t          *rapid.T
	nextID     int
	sandboxes  map[string]*pb.ObservedSandbox
	containers map[string]*pb.ObservedContainer
	started    map[string]int // container id -> StartContainer calls that took effect
	sidecars   map[string]bool
}

func (m *model) id(prefix string) string { m.nextID++; return fmt.Sprintf("%s%d", prefix, m.nextID) }

func (m *model) view(now time.Time) *pb.RuntimeObserved {
	obs := &pb.RuntimeObserved{PodUid: "uid-1", Complete: true, ListedAtUnixNano: now.UnixNano()}
	for _, id := range sortedKeys(m.sandboxes) {
		obs.Sandboxes = append(obs.Sandboxes, proto.Clone(m.sandboxes[id]).(*pb.ObservedSandbox))
	}
	for _, id := range sortedKeys(m.containers) {
		obs.Containers = append(obs.Containers, proto.Clone(m.containers[id]).(*pb.ObservedContainer))
	}
	return obs
}

// do carries out one effect, idempotently as actorlet's ContainerActor does.
func (m *model) do(e lifecycle.Effect, now time.Time) *pb.EffectResult {
	res := &pb.EffectResult{Key: e.Key()}
	switch e := e.(type) {
	case lifecycle.RunSandbox:
		for _, sb := range m.sandboxes {
			if sb.Attempt == e.Attempt {
				res.Id, res.Ip = sb.Id, sb.Ip
				return res
			}
		}
		sb := &pb.ObservedSandbox{Id: m.id("sb"), Attempt: e.Attempt, Ready: true, Ip: "10.0.0.1"}
		m.sandboxes[sb.Id] = sb
		res.Id, res.Ip = sb.Id, sb.Ip
	case lifecycle.PullImage:
		res.ImageRef = "sha256:img"
	case lifecycle.CreateContainer:
		for _, c := range m.containers {
			if c.Name == e.Name && c.Attempt == e.Attempt && c.SandboxId == e.SandboxID {
				res.Id = c.Id
				return res
			}
		}
		if sb := m.sandboxes[e.SandboxID]; sb == nil || !sb.Ready {
			res.Failed, res.Reason = true, "CreateContainerError"
			return res
		}
		c := &pb.ObservedContainer{Id: m.id("c"), SandboxId: e.SandboxID, Name: e.Name, Attempt: e.Attempt,
			State: pb.ObservedState_OBSERVED_CREATED}
		m.containers[c.Id] = c
		res.Id = c.Id
	case lifecycle.StartContainer:
		c := m.containers[e.ID]
		if c == nil {
			res.Failed, res.Reason = true, "RunContainerError"
			return res
		}
		if c.State != pb.ObservedState_OBSERVED_CREATED { // started before: report it, as ContainerActor does
			res.StartedAtUnixNano = c.StartedAtUnixNano
			return res
		}
		m.started[c.Id]++
		if c.Name[0] == 'c' {
			for _, o := range m.containers {
				if o.SandboxId == c.SandboxId && o.Name[0] == 'i' && o.State == pb.ObservedState_OBSERVED_RUNNING && !m.sidecars[o.Name] {
					m.t.Fatalf("app container %s started while init container %s runs", c.Name, o.Name)
				}
			}
		}
		c.State = pb.ObservedState_OBSERVED_RUNNING
		c.StartedAtUnixNano = now.UnixNano()
		res.StartedAtUnixNano = c.StartedAtUnixNano
	case lifecycle.StopContainer:
		if c := m.containers[e.ID]; c != nil {
			m.exit(c, 0, now)
			res.ExitCode, res.StartedAtUnixNano, res.FinishedAtUnixNano = c.ExitCode, c.StartedAtUnixNano, c.FinishedAtUnixNano
		}
	case lifecycle.RemoveContainer:
		delete(m.containers, e.ID)
	case lifecycle.UpdateContainerResources:
		if c := m.containers[e.ID]; c == nil || c.State != pb.ObservedState_OBSERVED_RUNNING {
			res.Failed, res.Reason, res.Message = true, "ResizeError", "container "+e.ID+" not running"
		}
	case lifecycle.StopSandbox:
		if sb := m.sandboxes[e.ID]; sb != nil {
			sb.Ready = false
			for _, c := range m.containers {
				if c.SandboxId == e.ID {
					m.exit(c, 137, now)
				}
			}
		}
	case lifecycle.RemoveSandbox:
		delete(m.sandboxes, e.ID)
		for id, c := range m.containers {
			if c.SandboxId == e.ID {
				delete(m.containers, id)
			}
		}
	}
	return res
}

func (m *model) exit(c *pb.ObservedContainer, code int32, now time.Time) {
	if c.State == pb.ObservedState_OBSERVED_EXITED {
		return
	}
	c.State = pb.ObservedState_OBSERVED_EXITED
	c.ExitCode = code
	c.FinishedAtUnixNano = now.UnixNano()
}

func (m *model) check(t *rapid.T) {
	ready := 0
	for _, sb := range m.sandboxes {
		if sb.Ready {
			ready++
		}
	}
	if ready > 1 {
		t.Fatalf("%d ready sandboxes for one pod", ready)
	}
	for id, n := range m.started {
		if n > 1 {
			t.Fatalf("container %s started %d times", id, n)
		}
	}
	running := map[string]int{}
	for _, c := range m.containers {
		if c.State == pb.ObservedState_OBSERVED_RUNNING {
			running[c.Name]++
			if running[c.Name] > 1 {
				t.Fatalf("two running instances of container %s", c.Name)
			}
		}
	}
}

// TestReplayRebuildsState drives a pod through random histories (effects done
// in random order, lost, repeated; exits; crashes; removal) and checks after
// every step that replaying the journal gives exactly the live state, that
// sequence numbers have no gaps, and that the runtime never holds two ready
// sandboxes or a container started twice.
func TestReplayRebuildsState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := lifecycle.DefaultConfig()
		now := t0
		m := &model{t: t, sandboxes: map[string]*pb.ObservedSandbox{}, containers: map[string]*pb.ObservedContainer{}, started: map[string]int{}, sidecars: map[string]bool{}}
		state := lifecycle.NewState("uid-1")
		var journal []*pb.Envelope
		var pending []lifecycle.Effect

		policy := rapid.SampledFrom([]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}).Draw(t, "policy")
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace, pod.UID = "p", "default", "uid-1"
		pod.Spec.RestartPolicy = policy
		if rapid.Bool().Draw(t, "deadline?") {
			secs := int64(rapid.IntRange(0, 900).Draw(t, "activeDeadlineSeconds"))
			pod.Spec.ActiveDeadlineSeconds = &secs
		}
		probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		for i := range rapid.IntRange(1, 3).Draw(t, "containers") {
			c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "img:1"}
			if rapid.Bool().Draw(t, "probes?") {
				c.LivenessProbe, c.ReadinessProbe = probe, probe
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		always := corev1.ContainerRestartPolicyAlways
		for i := range rapid.IntRange(0, 2).Draw(t, "init containers") {
			c := corev1.Container{Name: fmt.Sprintf("i%d", i), Image: "img:1"}
			if rapid.Bool().Draw(t, "sidecar?") {
				c.RestartPolicy = &always
				c.StartupProbe = probe
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
		}
		for _, c := range pod.Spec.InitContainers {
			m.sidecars[c.Name] = c.RestartPolicy != nil
		}
		podJSON, _ := jsonMarshal(pod)

		step := func(in lifecycle.Input) {
			before := proto.Clone(state.P)
			dec := cfg.Decide(state, in, now)
			// The input state is never changed (an adopted state is shared
			// by the published status), and a decision that journals
			// nothing keeps its PodState rather than a copy.
			if !proto.Equal(before, state.P) {
				t.Fatalf("Decide changed its input state:\nbefore: %v\nafter:  %v", before, state.P)
			}
			if len(dec.Events) == 0 && dec.State.P != state.P {
				t.Fatalf("a decision without events (input %T) keeps a copy of the PodState", in)
			}
			for _, env := range dec.Events {
				if want := uint64(len(journal) + 1); env.Seq != want {
					t.Fatalf("event seq %d, want %d", env.Seq, want)
				}
				journal = append(journal, env)
			}
			state = dec.State
			pending = dec.Effects
			for _, e := range pending {
				// A resize gives only what is allocated, never a request
				// the node has not accepted.
				if u, ok := e.(lifecycle.UpdateContainerResources); ok {
					for _, c := range append(append([]corev1.Container(nil), state.Pod.Spec.InitContainers...), state.Pod.Spec.Containers...) {
						if q, has := c.Resources.Requests[corev1.ResourceCPU]; c.Name == u.Name && (has != (u.CPURequest != "") || has && q.String() != u.CPURequest) {
							t.Fatalf("UpdateContainerResources %v, but %s is allocated %v", u, c.Name, c.Resources.Requests)
						}
					}
				}
			}
			replayed := lifecycle.NewState("uid-1")
			for _, env := range journal {
				lifecycle.Apply(replayed, env)
			}
			if !proto.Equal(replayed.P, state.P) {
				t.Fatalf("replayed state differs from live state:\nlive:   %v\nreplay: %v", state.P, replayed.P)
			}
			if !apiequality.Semantic.DeepEqual(replayed.Pod, state.Pod) {
				t.Fatalf("replayed allocation differs from the live one:\nlive:   %v\nreplay: %v", state.Pod, replayed.Pod)
			}
			checkJournalReplay(t, journal)
		}

		step(&pb.PodDesired{PodJson: podJSON, Source: "file"})
		cur := pod.DeepCopy()
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			switch rapid.IntRange(0, 11).Draw(t, "action") {
			case 0, 1, 2, 3: // carry out one outstanding effect
				var work []lifecycle.Effect
				for _, e := range pending {
					if _, ok := e.(lifecycle.ArmTimer); !ok {
						work = append(work, e)
					}
				}
				if len(work) == 0 {
					continue
				}
				e := work[rapid.IntRange(0, len(work)-1).Draw(t, "effect")]
				res := m.do(e, now)
				if rapid.Bool().Draw(t, "result lost") {
					continue // a crash before the result was seen
				}
				step(res)
			case 4: // the runtime lists the pod
				step(m.view(now))
			case 5: // a running container exits
				for _, id := range sortedKeys(m.containers) {
					if c := m.containers[id]; c.State == pb.ObservedState_OBSERVED_RUNNING {
						m.exit(c, int32(rapid.IntRange(0, 2).Draw(t, "code")), now)
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
				step(m.view(now))
			case 8:
				if rapid.IntRange(0, 5).Draw(t, "remove?") == 0 {
					step(&pb.PodUndesired{Reason: "Removed"})
				}
			case 9:
				step(&pb.Tick{})
			case 10: // a probe worker reports on a running container
				for _, id := range sortedKeys(m.containers) {
					if c := m.containers[id]; c.State == pb.ObservedState_OBSERVED_RUNNING {
						kind := rapid.SampledFrom([]pb.ProbeKind{pb.ProbeKind_PROBE_STARTUP, pb.ProbeKind_PROBE_LIVENESS, pb.ProbeKind_PROBE_READINESS}).Draw(t, "probe")
						step(&pb.ProbeResult{Name: c.Name, ContainerId: c.Id, Kind: kind, Success: rapid.Bool().Draw(t, "probe ok")})
						break
					}
				}
			case 11: // the source resizes a container, perhaps judged by the node's admission
				cur = cur.DeepCopy()
				cur.Generation++
				cs := append(cur.Spec.InitContainers, cur.Spec.Containers...)
				name := cs[rapid.IntRange(0, len(cs)-1).Draw(t, "resized")].Name
				cpu := resource.MustParse(rapid.SampledFrom([]string{"100m", "200m", "1"}).Draw(t, "cpu"))
				for _, l := range [][]corev1.Container{cur.Spec.InitContainers, cur.Spec.Containers} {
					for i := range l {
						if l[i].Name != name {
							continue
						}
						l[i].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: cpu}
						if rapid.Bool().Draw(t, "restart on resize?") {
							l[i].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
						}
					}
				}
				b, _ := jsonMarshal(cur)
				in := &pb.PodDesired{PodJson: b, Source: "file"}
				switch rapid.IntRange(0, 2).Draw(t, "verdict") {
				case 1:
					in.ResizeJudged = true
				case 2:
					in.ResizeJudged, in.ResizeReason, in.ResizeMessage = true, "OutOfcpu", "Node didn't have enough resource: cpu"
				}
				step(in)
			}
			m.check(t)
		}
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// checkJournalReplay checks that `actorlet journal replay` finds no
// divergence in a journal the core wrote: folded from seq 1, and from a
// snapshot taken after a random number of its events.
func checkJournalReplay(t *rapid.T, journal []*pb.Envelope) {
	if p := replay.Fold("uid-1", nil, journal); len(p.Divergences) > 0 {
		t.Fatalf("journal replay found divergences in a journal the core wrote: %v", p.Divergences)
	}
	k := rapid.IntRange(0, len(journal)).Draw(t, "snapshot after")
	if k == 0 {
		return
	}
	st := lifecycle.NewState("uid-1")
	for _, env := range journal[:k] {
		lifecycle.Apply(st, env)
	}
	snap := &pb.Snapshot{Seq: uint64(k), PodUid: "uid-1", State: proto.Clone(st.P).(*pb.PodState)}
	if p := replay.Fold("uid-1", snap, journal[k:]); len(p.Divergences) > 0 {
		t.Fatalf("journal replay from a snapshot at seq %d found divergences in a journal the core wrote: %v", k, p.Divergences)
	}
}
