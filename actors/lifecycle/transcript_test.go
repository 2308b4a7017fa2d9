package lifecycle_test

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal/replay"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness runs one transcript: a pod's state, its journal so far, and a clock.
type harness struct {
	// epoch numbers the runtime listings (observe): a result is stamped
	// with the current one, a listing takes the next (see cri.Epochs).
	epoch   uint64
	cfg     lifecycle.Config
	state   *lifecycle.State
	journal []*pb.Envelope
	now     time.Time
	pod     *corev1.Pod // the last add-pod's pod
}

func newHarness() *harness {
	return &harness{cfg: lifecycle.DefaultConfig(), state: lifecycle.NewState("uid-1"), now: t0}
}

// TestTranscripts runs the scripts in test/testdata/lifecycle. Rewrite the
// expected output with: go test ./actors/lifecycle -run Transcripts -rewrite
func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, "../../test/testdata/lifecycle", func(t *testing.T, path string) {
		h := newHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
		if p := replay.Fold("uid-1", nil, h.journal); len(p.Divergences) > 0 {
			t.Errorf("journal replay found divergences in the transcript's journal: %v", p.Divergences)
		}
	})
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "add-pod", "update-pod": // update-pod: the same pod as changed by its source
		pod := &corev1.Pod{}
		if err := yaml.UnmarshalStrict([]byte(d.Input), pod); err != nil {
			return "", err
		}
		pod.UID = "uid-1"
		b, err := jsonMarshal(pod)
		if err != nil {
			return "", err
		}
		h.pod = pod
		in := &pb.PodDesired{PodJson: b, Source: "file"}
		for _, a := range d.CmdArgs {
			v := strings.Join(a.Vals, ",")
			switch a.Key {
			case "deleted":
				// Already deleted when first seen, with this grace period.
				grace, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return "", fmt.Errorf("deleted=<seconds>: %w", err)
				}
				ts := metav1.NewTime(h.now)
				pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &ts, &grace
				if in.PodJson, err = jsonMarshal(pod); err != nil {
					return "", err
				}
			case "source":
				in.Source = v
			case "reject":
				in.RejectReason = v
			case "reject-msg":
				in.RejectMessage = v
			case "resize-fits": // the node's admission judged the resize to fit
				in.ResizeJudged = true
			case "resize-reason": // ... or not, with this reason
				in.ResizeJudged, in.ResizeReason = true, v
			case "resize-msg":
				in.ResizeMessage = v
			default:
				return "", fmt.Errorf("unknown arg %q", a.Key)
			}
		}
		return h.decide(in), nil
	case "delete-pod":
		// The API server's graceful deletion: the same pod with a
		// deletionTimestamp and a grace period.
		if h.pod == nil {
			return "", fmt.Errorf("delete-pod before add-pod")
		}
		grace := int64(30)
		for _, a := range d.CmdArgs {
			n, err := strconv.ParseInt(strings.Join(a.Vals, ""), 10, 64)
			if a.Key != "grace" || err != nil {
				return "", fmt.Errorf("delete-pod takes grace=<seconds>, not %s", a)
			}
			grace = n
		}
		pod := h.pod.DeepCopy()
		ts := metav1.NewTime(h.now)
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &ts, &grace
		b, err := jsonMarshal(pod)
		if err != nil {
			return "", err
		}
		return h.decide(&pb.PodDesired{PodJson: b, Source: "api"}), nil
	case "remove-pod":
		reason := "Removed"
		if d.HasArg("reason") {
			d.ScanArgs(nil, "reason", &reason)
		}
		return h.decide(&pb.PodUndesired{Reason: reason}), nil
	case "tick":
		if len(d.CmdArgs) > 0 {
			dur, err := time.ParseDuration(d.CmdArgs[0].Key)
			if err != nil {
				return "", err
			}
			h.now = h.now.Add(dur)
		}
		return h.decide(&pb.Tick{}), nil
	case "result", "fail":
		res, transient, err := parseResult(d, d.Cmd == "fail")
		if err != nil {
			return "", err
		}
		if transient {
			return "", fmt.Errorf("transient failures never reach the core (the Driver retries them)")
		}
		res.Epoch = h.epoch
		return h.decide(res), nil
	case "probe":
		// A probe worker's thresholded result:
		//   probe name=app id=c1 kind=readiness ok=true msg=...
		res := &pb.ProbeResult{}
		for _, a := range d.CmdArgs {
			v := strings.Join(a.Vals, ",")
			switch a.Key {
			case "name":
				res.Name = v
			case "id":
				res.ContainerId = v
			case "kind":
				k, ok := pb.ProbeKind_value["PROBE_"+strings.ToUpper(v)]
				if !ok {
					return "", fmt.Errorf("unknown probe kind %q", v)
				}
				res.Kind = pb.ProbeKind(k)
			case "ok":
				res.Success = v == "true"
			case "msg":
				res.Message = v
			default:
				return "", fmt.Errorf("unknown arg %q", a.Key)
			}
		}
		return h.decide(res), nil
	case "probe-targets":
		var b strings.Builder
		for _, t := range lifecycle.ProbeTargets(h.state) {
			fmt.Fprintf(&b, "%s id=%s startup-done=%v\n", t.Name, t.ContainerID, t.StartupDone)
		}
		if b.Len() == 0 {
			return "none\n", nil
		}
		return b.String(), nil
	case "evict":
		// The eviction manager evicts the pod: evict grace=<d> msg=...
		in := &pb.PodEvict{Reason: "Evicted"}
		for _, a := range d.CmdArgs {
			v := strings.Join(a.Vals, ",")
			switch a.Key {
			case "grace":
				g, err := time.ParseDuration(v)
				if err != nil {
					return "", err
				}
				in.GracePeriodNanos = int64(g)
			case "msg":
				in.Message = v
			default:
				return "", fmt.Errorf("unknown arg %q", a.Key)
			}
		}
		return h.decide(in), nil
	case "observe":
		obs, err := parseListing(d, h.now, &h.epoch)
		if err != nil {
			return "", err
		}
		return h.decide(obs), nil
	case "crash":
		// Everything not in the journal is lost; the state comes back from
		// replaying it, and the outstanding effects must follow from it alone.
		h.state = lifecycle.NewState("uid-1")
		for _, env := range h.journal {
			lifecycle.Apply(h.state, env)
		}
		return h.effects(h.cfg.Outstanding(h.state, h.now)), nil
	case "status": // status messages: with the waiting containers' messages
		st := lifecycle.Status(h.state, lifecycle.StatusEnv{RuntimeName: "sim", Now: h.now})
		return formatStatus(st, d.HasArg("messages")), nil
	case "conditions":
		// The pod's conditions with their reasons and messages.
		st := lifecycle.Status(h.state, lifecycle.StatusEnv{RuntimeName: "sim", Now: h.now})
		var b strings.Builder
		for _, c := range st.Conditions {
			fmt.Fprintf(&b, "%s=%s", c.Type, c.Status)
			if c.Reason != "" {
				fmt.Fprintf(&b, " reason=%s", c.Reason)
			}
			if c.Message != "" {
				fmt.Fprintf(&b, " message=%q", c.Message)
			}
			b.WriteByte('\n')
		}
		return b.String(), nil
	default:
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
}

// parseResult reads an effect's outcome: key=K [id= ip= ref= reason= msg=
// exit= exit-reason= hook-error=] [transient] (a failure only retried).
func parseResult(d *datadriven.TestData, failed bool) (res *pb.EffectResult, transient bool, err error) {
	res = &pb.EffectResult{Failed: failed}
	for _, a := range d.CmdArgs {
		v := strings.Join(a.Vals, ",")
		switch a.Key {
		case "key":
			res.Key = v
		case "id":
			res.Id = v
		case "ip":
			res.Ip = v
		case "ref":
			res.ImageRef = v
		case "reason":
			res.Reason = v
		case "msg":
			res.Message = v
		case "exit":
			n, _ := strconv.Atoi(v)
			res.ExitCode = int32(n)
		case "exit-reason":
			res.ExitReason = v
		case "hook-error":
			res.HookError = v
		case "transient":
			transient = true
		default:
			return nil, false, fmt.Errorf("unknown arg %q", a.Key)
		}
	}
	return res, transient, nil
}

func (h *harness) decide(in lifecycle.Input) string {
	dec := h.cfg.Decide(h.state, in, h.now)
	h.journal = append(h.journal, dec.Events...)
	h.state = dec.State
	var b strings.Builder
	for _, env := range dec.Events {
		b.WriteString(formatEvent(env, t0))
		b.WriteByte('\n')
	}
	b.WriteString(h.effects(dec.Effects))
	if b.Len() == 0 {
		return "ok\n"
	}
	return b.String()
}

func (h *harness) effects(fx []lifecycle.Effect) string {
	var b strings.Builder
	for _, e := range fx {
		s := fmt.Sprint(e)
		if at, ok := e.(lifecycle.ArmTimer); ok {
			s = "ArmTimer at=" + rel(at.At.UnixNano(), t0)
		}
		b.WriteString("> " + s + "\n")
	}
	return b.String()
}

// parseListing reads an observe command: observe [stale] [incomplete]
// [rebuild] and its objects (parseObserved), a listing numbered by *epoch: a
// listing takes the next epoch, a stale one the current (it began before the
// last results were known, and need not show what they created); it returns
// at once.
func parseListing(d *datadriven.TestData, now time.Time, epoch *uint64) (*pb.RuntimeObserved, error) {
	obs, err := parseObserved(d, now)
	if err != nil {
		return nil, err
	}
	if !d.HasArg("stale") {
		*epoch++
	}
	obs.ListedEpoch, obs.ReturnedEpoch = *epoch, *epoch
	return obs, nil
}

// parseObserved reads lines like
//
//	sandbox id=sb1 attempt=1 ready=true ip=10.0.0.2
//	container id=c1 sandbox=sb1 name=app attempt=1 state=running started=1s exit=0 restarts=0
//
// With the argument rebuild, the view asks the core to adopt what it shows
// (the pod's history is lost).
func parseObserved(d *datadriven.TestData, now time.Time) (*pb.RuntimeObserved, error) {
	obs := &pb.RuntimeObserved{PodUid: "uid-1", Complete: true, ListedAtUnixNano: now.UnixNano()}
	if d.HasArg("incomplete") {
		obs.Complete = false
	}
	obs.Rebuild = d.HasArg("rebuild")
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		kv := map[string]string{}
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		attempt, _ := strconv.Atoi(kv["attempt"])
		switch fields[0] {
		case "sandbox":
			obs.Sandboxes = append(obs.Sandboxes, &pb.ObservedSandbox{
				Id: kv["id"], Attempt: uint32(attempt), Ready: kv["ready"] != "false", Ip: kv["ip"]})
		case "container":
			c := &pb.ObservedContainer{Id: kv["id"], SandboxId: kv["sandbox"], Name: kv["name"], Attempt: uint32(attempt)}
			switch kv["state"] {
			case "created":
				c.State = pb.ObservedState_OBSERVED_CREATED
			case "running":
				c.State = pb.ObservedState_OBSERVED_RUNNING
			case "exited":
				c.State = pb.ObservedState_OBSERVED_EXITED
			}
			if v, ok := kv["started"]; ok {
				dur, _ := time.ParseDuration(v)
				c.StartedAtUnixNano = t0.Add(dur).UnixNano()
			}
			if v, ok := kv["finished"]; ok {
				dur, _ := time.ParseDuration(v)
				c.FinishedAtUnixNano = t0.Add(dur).UnixNano()
			}
			code, _ := strconv.Atoi(kv["exit"])
			c.ExitCode = int32(code)
			c.Reason = kv["reason"]
			restarts, _ := strconv.Atoi(kv["restarts"])
			c.RestartCount = uint32(restarts)
			obs.Containers = append(obs.Containers, c)
		default:
			return nil, fmt.Errorf("unknown observed object %q", fields[0])
		}
	}
	return obs, nil
}

func formatStatus(st corev1.PodStatus, messages bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", st.Phase)
	if st.PodIP != "" {
		fmt.Fprintf(&b, " ip=%s", st.PodIP)
	}
	if st.Reason != "" {
		fmt.Fprintf(&b, " reason=%s", st.Reason)
	}
	b.WriteByte('\n')
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	sort.Strings(conds)
	fmt.Fprintf(&b, "conditions: %s\n", strings.Join(conds, " "))
	all := slices.Clip(st.InitContainerStatuses)
	in := func(list []corev1.ContainerStatus, name string) bool {
		return slices.ContainsFunc(list, func(i corev1.ContainerStatus) bool { return i.Name == name })
	}
	for _, cs := range slices.Concat(all, st.ContainerStatuses, st.EphemeralContainerStatuses) {
		switch {
		case in(all, cs.Name):
			b.WriteString("init ")
		case in(st.EphemeralContainerStatuses, cs.Name):
			b.WriteString("ephemeral ")
		}
		fmt.Fprintf(&b, "%s: restarts=%d ready=%v", cs.Name, cs.RestartCount, cs.Ready)
		if cs.Started != nil && !*cs.Started && cs.State.Running != nil {
			b.WriteString(" started=false")
		}
		switch {
		case cs.State.Running != nil:
			fmt.Fprintf(&b, " running id=%s", cs.ContainerID)
		case cs.State.Terminated != nil:
			fmt.Fprintf(&b, " terminated exit=%d reason=%s", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
		case cs.State.Waiting != nil:
			fmt.Fprintf(&b, " waiting reason=%s", cs.State.Waiting.Reason)
			if messages && cs.State.Waiting.Message != "" {
				fmt.Fprintf(&b, " message=%q", cs.State.Waiting.Message)
			}
		}
		if lt := cs.LastTerminationState.Terminated; lt != nil {
			fmt.Fprintf(&b, " last=exit:%d", lt.ExitCode)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
