package app

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/podevents"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A pod's timeline, as `actorlet journal events <pod>` prints it for
// people: a summary of the pod as the journal leaves it (the status the
// node reports from it: phase, each container's state, restarts and last
// state, and why the pod stopped), its spec's digest (and the spec itself
// with --show-spec), then each journaled event with the reasons an operator
// knows from `kubectl describe pod` (the kubelet's event reasons, as
// node/podevents records them).

// printSummary writes the pod-level summary of st, as of now.
func printSummary(w io.Writer, uid string, st *lifecycle.State, now time.Time, showSpec bool) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Pod:\t%s (%s)\n", podName(st), uid)
	p := st.P
	if p.Source != "" {
		fmt.Fprintf(tw, "Source:\t%s\n", p.Source)
	}
	if p.SpecDigest != "" {
		hint := ""
		if !showSpec {
			hint = "  (--show-spec prints it)"
		}
		fmt.Fprintf(tw, "Spec:\tsha256:%s%s\n", p.SpecDigest, hint)
	}
	fmt.Fprintf(tw, "State:\t%s\n", podState(st))
	if st.Pod != nil {
		status := lifecycle.Status(st, lifecycle.StatusEnv{Now: now})
		fmt.Fprintf(tw, "Phase:\t%s\n", status.Phase)
		if why := stoppedBecause(st, status); why != "" {
			fmt.Fprintf(tw, "Stopped:\t%s\n", why)
		}
		tw.Flush()
		printContainers(w, status)
	} else {
		tw.Flush()
	}
	if spec := st.SpecJSON(); showSpec && len(spec) > 0 {
		spec, err := yaml.JSONToYAML(spec)
		if err != nil {
			return fmt.Errorf("the journaled spec of pod %s: %w", uid, err)
		}
		fmt.Fprintf(w, "Spec (sha256:%s):\n", p.SpecDigest)
		for _, line := range strings.Split(strings.TrimRight(string(spec), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintln(w, "Events:")
	return nil
}

// stoppedBecause says why the pod stopped or is stopping, or "" if it has
// not.
func stoppedBecause(st *lifecycle.State, status corev1.PodStatus) string {
	p := st.P
	why := func(reason, msg string) string {
		switch {
		case reason == "":
			return msg
		case msg == "":
			return reason
		}
		return reason + ": " + msg
	}
	switch {
	case p.Rejected:
		return "rejected, " + why(p.Reason, p.Message)
	case p.Evicted:
		return "evicted, " + why(p.FailReason, p.FailMessage)
	case p.DeadlineExceeded:
		return why(lifecycle.ReasonDeadlineExceeded, lifecycle.MessageDeadlineExceeded)
	case p.FailReason != "":
		return why(p.FailReason, p.FailMessage)
	case p.Removed:
		return "removed from the node"
	case p.Terminated:
		return fmt.Sprintf("terminated (%s)", why(p.Reason, p.Message))
	case p.Terminating:
		return fmt.Sprintf("terminating, grace period %s (%s)", time.Duration(p.GracePeriodNanos), why(p.Reason, p.Message))
	case status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed:
		return "every container has finished"
	}
	return ""
}

// printContainers writes each container's state, readiness, restarts and
// last state, as `kubectl describe pod` shows them.
func printContainers(w io.Writer, status corev1.PodStatus) {
	all := slices.Concat(status.InitContainerStatuses, status.ContainerStatuses)
	if len(all) == 0 {
		return
	}
	fmt.Fprintln(w, "Containers:")
	for i, cs := range all {
		kind := ""
		if i < len(status.InitContainerStatuses) {
			kind = " (init)"
		}
		fmt.Fprintf(w, "  %s%s: %s; ready=%v restarts=%d\n", cs.Name, kind, describeState(cs.State), cs.Ready, cs.RestartCount)
		if cs.LastTerminationState.Terminated != nil {
			fmt.Fprintf(w, "    last state: %s\n", describeState(cs.LastTerminationState))
		}
	}
}

func describeState(s corev1.ContainerState) string {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	switch {
	case s.Running != nil:
		return "Running since " + at(s.Running.StartedAt.Time)
	case s.Terminated != nil:
		t := s.Terminated
		out := fmt.Sprintf("Terminated %s, exit code %d", t.Reason, t.ExitCode)
		if !t.FinishedAt.IsZero() {
			out += ", finished " + at(t.FinishedAt.Time)
		}
		if t.Message != "" {
			out += ": " + t.Message
		}
		return out
	case s.Waiting != nil:
		out := "Waiting " + s.Waiting.Reason
		if s.Waiting.Message != "" {
			out += ": " + s.Waiting.Message
		}
		return out
	}
	return "unknown"
}

// eventReasons are the reasons an operator knows for a journal event: the
// kubelet's API event reasons recorded for it (node/podevents), and for
// the events the kubelet records per probe run or per stop, the reason of
// that event (Unhealthy, Killing). Nil for an event of actorlet's own
// bookkeeping (an attempt requested, a sandbox removed).
func eventReasons(pod *corev1.Pod, ev *pb.Event) []string {
	var out []string
	for _, e := range podevents.Translate(pod, ev) {
		out = append(out, e.Reason)
	}
	switch e := ev.GetKind().(type) {
	case *pb.Event_ProbeChanged:
		if !e.ProbeChanged.Success {
			out = append(out, podevents.Unhealthy)
		}
	case *pb.Event_PodTerminating:
		out = append(out, podevents.Killing)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// eventSpec is the spec digest and the spec of an event that sets one.
func eventSpec(ev *pb.Event) (digest string, spec []byte) {
	switch e := ev.GetKind().(type) {
	case *pb.Event_PodAccepted:
		return e.PodAccepted.SpecDigest, e.PodAccepted.PodJson
	case *pb.Event_PodUpdated:
		return e.PodUpdated.SpecDigest, e.PodUpdated.PodJson
	}
	return "", nil
}

// timelineLine is one event of the timeline: its reasons, and the short
// digest of a spec it sets.
func timelineLine(pod *corev1.Pod, ev *pb.Event) (reasons string, desc string) {
	reasons = strings.Join(eventReasons(pod, ev), ",")
	if reasons == "" {
		reasons = "-"
	}
	desc = ev.Describe(time.Time{})
	if digest, _ := eventSpec(ev); digest != "" {
		desc = fmt.Sprintf("spec=sha256:%.12s %s", digest, desc)
	}
	return reasons, desc
}

// specJSON is the spec of an event, for -o json --show-spec.
func specJSON(ev *pb.Event, show bool) json.RawMessage {
	if !show {
		return nil
	}
	if _, spec := eventSpec(ev); len(spec) > 0 && json.Valid(spec) {
		return spec
	}
	return nil
}
