package lifecycle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Input is what a pod reacts to, a closed set: *pb.PodDesired,
// *pb.PodUndesired, *pb.RuntimeObserved, *pb.Tick, *pb.ProbeResult,
// *pb.PodEvict or *pb.EffectResult (no other type implements it).
// EffectResults carry only definitive outcomes: the caller retries
// transient failures of an effect itself.
type Input interface {
	proto.Message
	pb.LifecycleInput
}

// Decision is the outcome of Decide.
type Decision struct {
	// Events to append to the journal, in order, with their sequence numbers.
	Events []*pb.Envelope
	// State is the input state with Events applied (a copy; the input state is
	// unchanged). Adopt it only once Events are durable.
	State *State
	// Effects outstanding in State, in the order they should be started.
	Effects []Effect
}

// maxPlanRounds bounds the intent loop of one decision; each round can only
// move the pod forward, so a handful suffices.
const maxPlanRounds = 16

// Decide computes what input means for the pod in s at time now. It is pure
// and deterministic.
// ReasonCreateContainerConfigError is the reason of a container creation
// that failed on the container's configuration (a ConfigMap, Secret or key
// its environment refers to is missing), as the kubelet names it.
const ReasonCreateContainerConfigError = "CreateContainerConfigError"

func (c Config) Decide(s *State, in Input, now time.Time) Decision {
	d := &decider{cfg: c, s: s.Clone(), now: now, source: s.source}
	d.react(in)
	var effects []Effect
	for range maxPlanRounds {
		before := len(d.events)
		effects = d.plan()
		if len(d.events) == before {
			break
		}
	}
	d.s.decoded = decodedSpec{} // not kept past the decision (see State.decoded)
	if len(d.events) == 0 {
		// Nothing journaled: the fold is the input's (P changes only by
		// Apply), so the decided state shares the input's PodState instead
		// of keeping the copy decided on; a pod's states, and whoever holds
		// an older one (a published status), share one PodState until an
		// event changes it.
		d.s.P = s.P
	}
	return Decision{Events: d.events, State: d.s, Effects: effects}
}

// Outstanding returns the effects outstanding in s at now, without deciding
// anything new. It is Decide with a Tick, minus the events.
func (c Config) Outstanding(s *State, now time.Time) []Effect {
	return c.Decide(s, &pb.Tick{}, now).Effects
}

type decider struct {
	cfg    Config
	s      *State
	now    time.Time
	events []*pb.Envelope
	// strayCount is the number of stray runtime objects seen by the last plan.
	strayCount int
	// resizeVerdict: the node admission's verdict on the pod's resize that
	// came with this input (a PodDesired), if any.
	resizeVerdict *pb.PodDesired
	// viewEpoch: when the runtime view this input is returned (its
	// returned_epoch): what the view makes the core adopt is stamped with it.
	viewEpoch uint64
	// source: the source's object of this input (see State.source).
	source *corev1.Pod
}

func (d *decider) emit(ev *pb.Event) {
	env := &pb.Envelope{
		Seq:          d.s.P.Seq + 1,
		TimeUnixNano: d.now.UnixNano(),
		PodUid:       d.s.UID(),
		Event:        ev,
	}
	Apply(d.s, env)
	d.events = append(d.events, env)
}

// ---- reacting to inputs ----

func (d *decider) react(in Input) {
	switch in := in.(type) {
	case *pb.PodDesired:
		d.desired(in)
	case *pb.PodUndesired:
		d.undesired(in.GetReason())
	case *pb.RuntimeObserved:
		d.viewEpoch = in.GetReturnedEpoch()
		d.s.Observed = in
		if in.GetRebuild() {
			d.adopt(in)
		}
		d.reconcile(in)
	case *pb.EffectResult:
		d.result(in)
	case *pb.ProbeResult:
		d.probe(in)
	case *pb.PodEvict:
		d.evict(in)
	case *pb.Tick, nil:
	}
}

func (d *decider) desired(in *pb.PodDesired) {
	if in.ResizeJudged {
		d.resizeVerdict = in
	}
	p := d.s.P
	if (p.Terminating && !p.Removed) || d.s.CleanUpPending() {
		// Wanted again while going, or before its clean-up (which would
		// tear down what a new life sets up): the Supervisor asks again
		// once it is gone.
		return
	}
	// The source's pod is decoded once per input, and encoded as journaled
	// (storedSpec) once: acceptance and update share both, and the fold of
	// the event reuses the decoded pod when the journaled bytes are the
	// input's (see State.decoded).
	var pod *corev1.Pod
	var err error
	var stored []byte
	var digest string
	if d.s.Accepted() && !p.Removed && bytes.Equal(in.PodJson, d.s.SpecJSON()) {
		// The spec as journaled (a restart's first input, a resync): the
		// same bytes decode to the same pod, which the state holds already.
		pod, stored, digest = d.s.Desired(), in.PodJson, p.SpecDigest
	} else if pod, err = DecodePod(in.PodJson); err == nil {
		stored, digest = storedSpec(pod)
		if bytes.Equal(stored, in.PodJson) {
			if d.source != nil && reflect.DeepEqual(d.source, pod) {
				// The source's own object, as decoded: kept in place of
				// the decoding (which goes), shared read-only as the state's
				// pods are.
				pod = d.source
			}
			d.s.decoded = decodedSpec{json: stored, pod: pod}
		}
	}
	if (!d.s.hasSpec() || p.Removed) && !p.Rejected {
		if err != nil {
			d.emit(&pb.Event{Kind: &pb.Event_PodRejected{PodRejected: &pb.PodRejected{
				Reason: "InvalidSpec", Message: err.Error()}}})
			return
		}
		if reason, msg := unsupported(pod); msg != "" {
			d.emit(&pb.Event{Kind: &pb.Event_PodRejected{PodRejected: &pb.PodRejected{
				Reason: reason, Message: msg, PodJson: stored}}})
			return
		}
		if in.RejectReason != "" {
			d.emit(&pb.Event{Kind: &pb.Event_PodRejected{PodRejected: &pb.PodRejected{
				Reason: in.RejectReason, Message: in.RejectMessage, PodJson: stored}}})
			return
		}
		d.emit(&pb.Event{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{
			PodJson: stored, SpecDigest: digest, Source: in.Source}}})
	}
	if d.s.Pod == nil || err != nil {
		return
	}
	if pod.DeletionTimestamp != nil {
		grace := d.graceOf(pod)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		d.terminate("Deleted", grace)
		return
	}
	d.update(pod, stored, digest)
}

func (d *decider) undesired(reason string) {
	if reason == "" {
		reason = "Removed"
	}
	if d.s.Pod == nil {
		d.terminate(reason, d.cfg.OrphanGrace)
		return
	}
	d.terminate(reason, d.graceOf(d.s.Pod))
}

func (d *decider) graceOf(pod *corev1.Pod) time.Duration {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

func (d *decider) terminate(reason string, grace time.Duration) {
	p := d.s.P
	if p.Terminating || p.Removed || p.Terminated {
		return
	}
	if grace < 0 {
		grace = 0
	}
	d.emit(&pb.Event{Kind: &pb.Event_PodTerminating{PodTerminating: &pb.PodTerminating{
		GracePeriodNanos: int64(grace), Reason: reason, DeadlineUnixNano: d.now.Add(grace).UnixNano()}}})
}

// reconcile folds a runtime view into the journal: adopt what the intents
// explain, record exits and losses. Stray objects are handled as effects.
func (d *decider) reconcile(obs *pb.RuntimeObserved) {
	p := d.s.P
	listedAt, epoch := obs.GetListedAtUnixNano(), obs.GetListedEpoch()
	seenSandbox := map[string]*pb.ObservedSandbox{}
	for _, sb := range obs.GetSandboxes() {
		seenSandbox[sb.Id] = sb
		cur := p.Sandbox
		if cur == nil {
			continue
		}
		if cur.Phase == pb.SandboxPhase_SANDBOX_REQUESTED && sb.Attempt == cur.Attempt {
			d.emit(&pb.Event{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{
				Attempt: sb.Attempt, SandboxId: sb.Id, Ip: sb.Ip, Recovered: true, Epoch: d.viewEpoch}}})
		}
		// A finished pod's sandbox not ready is the stop the pod asked
		// for (the runtime may show it before the stop's result), not a
		// loss: a lost sandbox would be replaced, and the old one removed
		// with the exited containers the finished pod keeps.
		if cur.Id == sb.Id && cur.Phase == pb.SandboxPhase_SANDBOX_READY && !sb.Ready && !p.Terminating && !finished(d.s, d.now) {
			d.emit(&pb.Event{Kind: &pb.Event_SandboxLost{SandboxLost: &pb.SandboxLost{
				SandboxId: sb.Id, Reason: "SandboxNotReady"}}})
		}
	}
	seenContainer := map[string]bool{}
	for _, c := range obs.GetContainers() {
		seenContainer[c.Id] = true
		r := p.Containers[c.Name]
		if r == nil {
			continue
		}
		if r.Phase == pb.ContainerPhase_CONTAINER_REQUESTED && c.Attempt == r.Attempt && p.Sandbox != nil && c.SandboxId == p.Sandbox.Id {
			d.emit(&pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{
				Name: c.Name, Attempt: c.Attempt, ContainerId: c.Id, Recovered: true, Epoch: d.viewEpoch}}})
		}
		if r.Id != c.Id {
			continue
		}
		switch c.State {
		case pb.ObservedState_OBSERVED_RUNNING:
			if r.Phase == pb.ContainerPhase_CONTAINER_CREATED {
				d.started(r, c.StartedAtUnixNano, true)
			}
		case pb.ObservedState_OBSERVED_EXITED:
			if r.Phase == pb.ContainerPhase_CONTAINER_CREATED && c.StartedAtUnixNano != 0 {
				d.started(r, c.StartedAtUnixNano, true)
			}
			if r.Phase == pb.ContainerPhase_CONTAINER_CREATED || r.Phase == pb.ContainerPhase_CONTAINER_RUNNING {
				d.exited(r, c.ExitCode, c.Reason, c.Message, c.StartedAtUnixNano, c.FinishedAtUnixNano, true)
			}
		}
	}
	if !obs.GetComplete() {
		return
	}
	// What the journal says exists but the runtime no longer shows.
	for _, sb := range d.s.Sandboxes() {
		if sb.Id == "" || seenSandbox[sb.Id] != nil || !listedAfter(epoch, sb.CreatedEpoch) {
			continue
		}
		switch {
		case sb.Phase == pb.SandboxPhase_SANDBOX_REMOVED:
		case sb == p.Sandbox && sb.Phase == pb.SandboxPhase_SANDBOX_READY && !p.Terminating && !finished(d.s, d.now):
			d.emit(&pb.Event{Kind: &pb.Event_SandboxLost{SandboxLost: &pb.SandboxLost{
				SandboxId: sb.Id, Reason: "SandboxMissing"}}})
		default:
			d.emit(&pb.Event{Kind: &pb.Event_SandboxRemoved{SandboxRemoved: &pb.SandboxRemoved{SandboxId: sb.Id}}})
		}
	}
	for _, name := range d.recordNames() {
		r := p.Containers[name]
		for _, id := range slices.Clone(r.DeadIds) {
			if !seenContainer[id] {
				d.emit(&pb.Event{Kind: &pb.Event_ContainerRemoved{ContainerRemoved: &pb.ContainerRemoved{
					Name: name, ContainerId: id}}})
			}
		}
		if r.Id == "" || seenContainer[r.Id] || !listedAfter(epoch, r.CreatedEpoch) {
			continue
		}
		switch r.Phase {
		case pb.ContainerPhase_CONTAINER_RUNNING:
			d.exited(r, 137, "ContainerStatusUnknown",
				"The container could not be located when the pod was listed", r.StartedAtUnixNano, listedAt, true)
		case pb.ContainerPhase_CONTAINER_CREATED:
			d.emit(&pb.Event{Kind: &pb.Event_ContainerFailed{ContainerFailed: &pb.ContainerFailed{
				Name: name, Attempt: r.Attempt, ContainerId: r.Id, Reason: "ContainerMissing",
				Message: "the created container could not be located when the pod was listed"}}})
		}
	}
}

// listedAfter reports whether a listing of epoch listed began after the
// creation stamped created was known, so that it must show the object (see
// cri.Epochs): a view without an epoch forgets nothing. No wall-clock time
// enters it: a clock step cannot make a stale view forget an object.
func listedAfter(listed, created uint64) bool { return listed != 0 && created < listed }

func (d *decider) started(r *pb.ContainerRecord, at int64, recovered bool) {
	if at == 0 {
		at = d.now.UnixNano()
	}
	d.emit(&pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{
		Name: r.Name, Attempt: r.Attempt, ContainerId: r.Id, StartedAtUnixNano: at, Recovered: recovered}}})
}

// exited records a container's exit and, when it will be restarted, the
// back-off before its next attempt.
func (d *decider) exited(r *pb.ContainerRecord, code int32, reason, msg string, started, finished int64, backoff bool) {
	if finished == 0 {
		finished = d.now.UnixNano()
	}
	if reason == "" {
		reason = "Error"
		if code == 0 {
			reason = "Completed"
		}
	}
	d.emit(&pb.Event{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{
		Name: r.Name, Attempt: r.Attempt, ContainerId: r.Id, ExitCode: code, Reason: reason, Message: msg,
		StartedAtUnixNano: started, FinishedAtUnixNano: finished}}})
	if !backoff || d.s.P.Terminating || !d.restartWanted(r) {
		return
	}
	prev := time.Duration(r.NextBackoffNanos)
	if started != 0 && time.Duration(finished-started) >= d.cfg.BackoffReset || restartKill(r.KillReason) {
		prev = 0
	}
	d.backoff(r, time.Unix(0, finished), prev, "CrashLoopBackOff",
		fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", prev, r.Name, d.podRef()))
}

// backoff schedules the next attempt of r: from is when the failure happened,
// prev the delay owed now (0: retry at once, then BackoffInitial).
func (d *decider) backoff(r *pb.ContainerRecord, from time.Time, prev time.Duration, reason, msg string) {
	next := d.cfg.BackoffInitial
	if prev > 0 {
		next = min(2*prev, d.cfg.BackoffMax)
	}
	until := from.Add(prev)
	if !until.After(d.now) {
		reason, msg = "", ""
	}
	d.emit(&pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{
		Name: r.Name, UntilUnixNano: until.UnixNano(), NextBackoffNanos: int64(next), Reason: reason, Message: msg}}})
}

func (d *decider) podRef() string {
	if d.s.Pod == nil {
		return d.s.UID()
	}
	return fmt.Sprintf("%s_%s(%s)", d.s.Pod.Name, d.s.Pod.Namespace, d.s.UID())
}

func (d *decider) restartWanted(r *pb.ContainerRecord) bool { return restartWanted(d.s, r) }

// restartWanted reports whether the exited container r is restarted: an
// ephemeral container never is; a sidecar always is; a regular init
// container that succeeded is done, one that failed is restarted as its own
// restart rules and policy or the pod's say (containerShouldRestart); an
// app container likewise. A pod past its active deadline restarts nothing.
func restartWanted(s *State, r *pb.ContainerRecord) bool {
	if s.Pod == nil || s.P.DeadlineExceeded || s.ephemeralSpec(r.Name) != nil {
		return false // an ephemeral container is never restarted
	}
	if restartKill(r.KillReason) {
		return true // restarted with its new spec or allocation, whatever the policy
	}
	if c := s.initSpec(r.Name); c != nil {
		switch {
		case isSidecar(c):
			return true
		case r.ExitCode == 0:
			return false
		default:
			return containerShouldRestart(c, &s.Pod.Spec, r.ExitCode)
		}
	}
	return containerShouldRestart(s.specContainer(r.Name), &s.Pod.Spec, r.ExitCode)
}

func (d *decider) result(res *pb.EffectResult) {
	p := d.s.P
	kind, rest, _ := strings.Cut(res.GetKey(), "/")
	switch kind {
	case "runsandbox":
		attempt, err := strconv.ParseUint(rest, 10, 32)
		cur := p.Sandbox
		if err != nil || cur == nil || cur.Attempt != uint32(attempt) || cur.Phase != pb.SandboxPhase_SANDBOX_REQUESTED {
			return
		}
		if res.Failed {
			delay := min(d.cfg.BackoffInitial<<min(cur.Failures, 16), d.cfg.BackoffMax)
			d.emit(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{
				Attempt: cur.Attempt, Reason: orDefault(res.Reason, "FailedCreatePodSandBox"), Message: res.Message,
				RetryAtUnixNano: d.now.Add(delay).UnixNano()}}})
			return
		}
		d.emit(&pb.Event{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{
			Attempt: cur.Attempt, SandboxId: res.Id, Ip: res.Ip, Epoch: res.Epoch}}})
	case "pull":
		name, attempt, ok := nameAttempt(rest)
		r := p.Containers[name]
		spec := d.s.specContainer(name)
		if !ok || spec == nil {
			return
		}
		if r == nil {
			r = &pb.ContainerRecord{Name: name}
		}
		if res.Failed {
			d.emit(&pb.Event{Kind: &pb.Event_ImagePullFailed{ImagePullFailed: &pb.ImagePullFailed{
				Container: name, Image: spec.Image, Reason: orDefault(res.Reason, "ErrImagePull"), Message: res.Message, Attempt: attempt}}})
			// As the kubelet's image manager: every failed pull starts a
			// back-off, the first one included. The first window shows
			// the pull's error (ErrImagePull), as the kubelet does until
			// its next sync; later ones show ImagePullBackOff.
			prev, reason, msg := time.Duration(r.NextBackoffNanos), "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", spec.Image)
			if prev == 0 {
				prev, reason, msg = d.cfg.BackoffInitial, "", ""
			}
			d.backoff(d.s.P.Containers[name], d.now, prev, reason, msg)
			return
		}
		if r.PulledAttempt != attempt {
			d.emit(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{
				Container: name, Image: spec.Image, ImageRef: res.ImageRef, Attempt: attempt,
				PullNanos: res.PullNanos, ImageSize: res.ImageSize}}})
		}
	case "create":
		name, attempt, ok := nameAttempt(rest)
		r := p.Containers[name]
		if !ok || r == nil || r.Attempt != attempt || r.Phase != pb.ContainerPhase_CONTAINER_REQUESTED {
			return
		}
		if res.Failed {
			reason := orDefault(res.Reason, "CreateContainerError")
			d.emit(&pb.Event{Kind: &pb.Event_ContainerFailed{ContainerFailed: &pb.ContainerFailed{
				Name: name, Attempt: attempt, Reason: reason, Message: res.Message}}})
			prev := time.Duration(r.NextBackoffNanos)
			if reason == ReasonCreateContainerConfigError {
				// A ConfigMap or Secret that is missing now may be created
				// any time: retried every BackoffInitial, as the kubelet
				// retries it at each pod sync, not backed off to BackoffMax.
				prev = min(prev, d.cfg.BackoffInitial)
			}
			d.backoff(r, d.now, prev, "", "")
			return
		}
		d.emit(&pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{
			Name: name, Attempt: attempt, ContainerId: res.Id, Epoch: res.Epoch}}})
	case "start":
		r := d.recordByID(rest)
		if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_CREATED {
			return
		}
		if res.Failed {
			d.emit(&pb.Event{Kind: &pb.Event_ContainerFailed{ContainerFailed: &pb.ContainerFailed{
				Name: r.Name, Attempt: r.Attempt, ContainerId: r.Id, Reason: orDefault(res.Reason, "RunContainerError"), Message: res.Message}}})
			if d.s.ephemeralSpec(r.Name) == nil { // an ephemeral one is not tried again
				d.backoff(r, d.now, time.Duration(r.NextBackoffNanos), "", "")
			}
			return
		}
		d.started(r, res.StartedAtUnixNano, false)
		if res.HookError != "" {
			d.hookFailed(r, HookPostStart, res.HookError)
		}
	case "stop":
		r := d.recordByID(rest)
		if r == nil || res.Failed {
			return
		}
		if r.Phase == pb.ContainerPhase_CONTAINER_CREATED || r.Phase == pb.ContainerPhase_CONTAINER_RUNNING {
			if res.HookError != "" {
				d.hookFailed(r, HookPreStop, res.HookError)
			}
			started := res.StartedAtUnixNano
			if started == 0 {
				started = r.StartedAtUnixNano
			}
			// A container killed for a failed probe or hook is restarted
			// with back-off, as after a crash.
			d.exited(r, res.ExitCode, res.ExitReason, res.Message, started, res.FinishedAtUnixNano, r.KillReason != "")
		}
	case "hook":
		d.hookResult(rest, res)
	case "resize":
		d.resizeResult(rest, res)
	case "rmcontainer":
		if res.Failed {
			return
		}
		for _, name := range d.recordNames() {
			if slices.Contains(p.Containers[name].DeadIds, rest) {
				d.emit(&pb.Event{Kind: &pb.Event_ContainerRemoved{ContainerRemoved: &pb.ContainerRemoved{
					Name: name, ContainerId: rest}}})
			}
		}
	case "stopsandbox":
		if res.Failed {
			return
		}
		for _, sb := range d.s.Sandboxes() {
			if sb.Id == rest && (sb.Phase == pb.SandboxPhase_SANDBOX_READY || sb.Phase == pb.SandboxPhase_SANDBOX_FAILED) {
				d.emit(&pb.Event{Kind: &pb.Event_SandboxStopped{SandboxStopped: &pb.SandboxStopped{SandboxId: rest}}})
			}
		}
	case "cleanup":
		d.cleanedUp(res)
	case "rmsandbox":
		if res.Failed {
			return
		}
		for _, sb := range d.s.Sandboxes() {
			if sb.Id == rest && sb.Phase != pb.SandboxPhase_SANDBOX_REMOVED {
				d.emit(&pb.Event{Kind: &pb.Event_SandboxRemoved{SandboxRemoved: &pb.SandboxRemoved{SandboxId: rest}}})
			}
		}
	}
}

func (d *decider) recordByID(id string) *pb.ContainerRecord {
	for _, name := range d.recordNames() {
		if r := d.s.P.Containers[name]; r.Id == id && id != "" {
			return r
		}
	}
	return nil
}

// recordNames returns the container record names in a deterministic order.
func (d *decider) recordNames() []string {
	names := make([]string, 0, len(d.s.P.Containers))
	for n := range d.s.P.Containers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func nameAttempt(s string) (string, uint32, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(s[i+1:], 10, 32)
	return s[:i], uint32(n), err == nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// storedSpec returns the pod as journaled (status dropped) and its digest.
func storedSpec(pod *corev1.Pod) ([]byte, string) {
	cp := *pod // shallow: only encoded, never changed
	cp.Status = corev1.PodStatus{}
	b, err := json.Marshal(&cp)
	if err != nil { // a decoded Pod always encodes
		panic(fmt.Sprintf("encode pod %s: %v", pod.UID, err))
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// unsupported gives the reason and message of a pod this node cannot run,
// or "": a pod for another OS (the kubelet's PodOSNotSupported), or parts
// of a spec this version cannot run (UnsupportedPodSpec).
func unsupported(pod *corev1.Pod) (reason, message string) {
	if pod.Spec.OS != nil && pod.Spec.OS.Name != corev1.Linux {
		return "PodOSNotSupported", fmt.Sprintf("Failed to admit pod as the OS field doesn't match node OS: the pod asks for %q, the node runs linux", pod.Spec.OS.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return "UnsupportedPodSpec", "the pod has no containers"
	}
	return "", ""
}
