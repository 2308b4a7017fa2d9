package lifecycle

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// State is one pod as the core knows it: the journaled fold (P), the decoded
// spec (Pod, derived from the journaled spec), and the newest runtime view
// (Observed), which is not journaled and is empty after a replay until the
// runtime is listed again.
//
// The journaled spec (the pod_json of the last PodAccepted, PodUpdated or
// PodRejected) is SpecJSON. P.PodJson holds its bytes only when the decoded
// spec does not encode back to exactly them (bytes that do not decode, or
// that are not as storedSpec writes them, from a journal written by hand);
// otherwise P.PodJson is nil and SpecJSON encodes the spec again, so that a
// running pod keeps its spec once (decoded), not twice (the ~1.3 KB of JSON
// were a tenth of a fleet's heap per pod). A snapshot holds the bytes
// (Snapshot), and the journal's events always do: what is journaled and
// what replay folds are unchanged.
type State struct {
	P *pb.PodState
	// Pod is the pod as allocated: its spec (desired) with the CPU and
	// memory of a resize not allocated yet (P.Allocated) as they were. It
	// is what containers are created with and what the status reports.
	Pod      *corev1.Pod
	Observed *pb.RuntimeObserved
	// desired: the spec as journaled last, decoded from SpecJSON (Pod
	// itself when no resize is pending).
	desired *corev1.Pod
	// jsonDropped: P.PodJson does not hold the journaled spec, which is
	// storedSpec(desired) (see SpecJSON).
	jsonDropped bool
	// asked: the lifecycle hook tries this process journaled (see
	// hookCalls); not journaled, so empty after a replay.
	asked hookCalls
	// decoded: the pod Decide just decoded from a source's input whose
	// bytes are the ones it journals (PodAccepted, PodUpdated, PodRejected),
	// so that folding the event does not decode the same bytes again.
	// DecodePod is deterministic: the same bytes give the same pod, so a
	// replay, which decodes, folds the same state. Never journaled.
	decoded decodedSpec
	// source: the source's own object of the PodDesired being decided
	// (Driver.Offer), kept as the spec in place of the pod decoded from its
	// JSON when the two are deeply equal, so that the node holds the pod in
	// one shape. Equal objects behave the same, so the state folds as a
	// replay, which decodes, does. Only on the state handed to Decide;
	// never cloned, never journaled.
	source *corev1.Pod
}

// decodedSpec is a pod and the JSON it was decoded from.
type decodedSpec struct {
	json []byte
	pod  *corev1.Pod
}

// decode is DecodePod(b), taken from s.decoded when that was decoded from
// the same bytes. The decoded pod is shared and never mutated, as State.Pod.
// exact reports whether storedSpec(pod) is b: true for s.decoded, whose
// bytes Decide encoded from that pod (or from one deeply equal to it),
// else checked by encoding the pod again.
func (s *State) decode(b []byte) (pod *corev1.Pod, exact bool, err error) {
	if c := s.decoded; c.pod != nil && bytes.Equal(c.json, b) {
		s.decoded = decodedSpec{}
		return c.pod, true, nil
	}
	if pod, err = DecodePod(b); err != nil {
		return nil, false, err
	}
	again, _ := storedSpec(pod)
	return pod, bytes.Equal(again, b), nil
}

// setSpecJSON makes b the journaled spec, with pod decoded from it (nil if
// it did not decode) and exact whether storedSpec(pod) is b: P.PodJson
// holds b only if SpecJSON could not give it back from the decoded spec.
// Call it before setSpec.
func (s *State) setSpecJSON(b []byte, exact bool) {
	if exact && len(b) > 0 {
		s.P.PodJson = nil
		s.jsonDropped = true
		return
	}
	s.P.PodJson = b
	s.jsonDropped = false
}

// SpecJSON is the journaled spec: the pod_json of the event that set it,
// byte for byte (nil if there is none). It encodes the decoded spec again
// when P.PodJson does not hold the bytes (see State); never mutate it.
func (s *State) SpecJSON() []byte {
	if !s.jsonDropped || s.desired == nil {
		return s.P.PodJson
	}
	b, _ := storedSpec(s.desired)
	return b
}

// hasSpec reports whether a spec was journaled (len(SpecJSON()) > 0),
// without encoding it.
func (s *State) hasSpec() bool {
	return len(s.P.PodJson) > 0 || (s.jsonDropped && s.desired != nil)
}

// Snapshot is P as a snapshot stores it: a copy with its pod_json
// (SpecJSON), so that FromSnapshot restores the same state.
func (s *State) Snapshot() *pb.PodState {
	ps := proto.Clone(s.P).(*pb.PodState)
	ps.PodJson = s.SpecJSON()
	return ps
}

// NewState returns the empty state of the pod with the given UID.
func NewState(uid string) *State {
	return &State{P: &pb.PodState{Uid: uid, Containers: map[string]*pb.ContainerRecord{}}}
}

// FromSnapshot rebuilds a state from a snapshot's PodState.
func FromSnapshot(ps *pb.PodState) (*State, error) {
	s := &State{P: proto.Clone(ps).(*pb.PodState)}
	if s.P.Containers == nil {
		s.P.Containers = map[string]*pb.ContainerRecord{}
	}
	if b := s.P.PodJson; len(b) > 0 {
		pod, exact, err := s.decode(b)
		if err != nil {
			return nil, fmt.Errorf("snapshot of pod %s: %w", ps.GetUid(), err)
		}
		s.setSpecJSON(b, exact)
		s.setSpec(pod)
	}
	return s, nil
}

// Clone returns a deep copy. The decoded Pod is shared: it is never mutated.
func (s *State) Clone() *State {
	return &State{P: proto.Clone(s.P).(*pb.PodState), Pod: s.Pod, desired: s.desired, jsonDropped: s.jsonDropped, Observed: s.Observed, asked: s.asked}
}

// setSpec makes pod (decoded from SpecJSON) the desired spec, and Pod
// that spec with P.Allocated.
func (s *State) setSpec(pod *corev1.Pod) {
	s.desired = pod
	s.Pod = allocatedPod(pod, s.P.Allocated, s.P.AllocatedPodResources)
}

// Desired is the pod's spec as its source wants it; it differs from Pod
// while a resize is not allocated.
func (s *State) Desired() *corev1.Pod {
	if s.desired == nil {
		return s.Pod
	}
	return s.desired
}

// UID is the pod's UID.
func (s *State) UID() string { return s.P.GetUid() }

// Accepted reports whether the node took the pod (it has a spec and was not rejected).
func (s *State) Accepted() bool { return s.Pod != nil && !s.P.Rejected }

// Done reports whether nothing is left to do for the pod: it was removed and
// cleaned up (PodCleanedUp; see CleanUpPod), or it was rejected without ever
// creating anything.
func (s *State) Done() bool {
	return (s.P.Removed && !s.CleanUpPending()) || s.neverRan()
}

// DecodePod decodes a journaled pod.
func DecodePod(b []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := json.Unmarshal(b, pod); err != nil {
		return nil, fmt.Errorf("decode pod spec: %w", err)
	}
	return pod, nil
}

func (s *State) container(name string) *pb.ContainerRecord {
	r := s.P.Containers[name]
	if r == nil {
		if s.P.Containers == nil {
			s.P.Containers = map[string]*pb.ContainerRecord{}
		}
		r = &pb.ContainerRecord{Name: name}
		s.P.Containers[name] = r
	}
	return r
}

// specContainer returns the spec of the named app, init or ephemeral
// container (the last as a Container).
func (s *State) specContainer(name string) *corev1.Container {
	if s.Pod == nil {
		return nil
	}
	for i := range s.Pod.Spec.Containers {
		if s.Pod.Spec.Containers[i].Name == name {
			return &s.Pod.Spec.Containers[i]
		}
	}
	if c := s.initSpec(name); c != nil {
		return c
	}
	if ec := s.ephemeralSpec(name); ec != nil {
		return asContainer(ec)
	}
	return nil
}
