package lifecycle

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Adopting a pod from the runtime (a RuntimeObserved with Rebuild set).
//
// A pod whose history is lost (its journal stream failed its check, or the
// journal itself was lost while the runtime held the pod's objects) is not
// started afresh: the core folds what the runtime holds into the state, as
// the kubelet does from its labels, and journals it, so the next restart is
// an ordinary one:
//
//   - the newest sandbox (highest attempt, a ready one first) becomes the
//     pod's sandbox, with its ID and IP; older ones are strays;
//   - in it, the newest attempt of each container of the spec becomes that
//     container's record: created, started and exited as the runtime says,
//     with the restart count the container's cri.AnnotationRestartCount
//     holds; a running container is adopted, never stopped or recreated;
//   - an exited container the restart policy restarts waits the crash-loop
//     back-off its restart count implies (BackoffInitial doubling per
//     restart, at most BackoffMax), from when it finished; one it does not
//     restart (Never, or OnFailure after success) stays exited, so a
//     finished pod is not run again;
//   - a sandbox that is not ready is stopped when the pod has finished, and
//     otherwise lost (the pod gets a new sandbox, as after any loss).
//
// Adoption happens only while the state has no runtime history at all (no
// sandbox was ever recorded with an ID) and the pod is accepted; otherwise
// the flag is ignored and the view is an ordinary one.
func (d *decider) adopt(obs *pb.RuntimeObserved) {
	p := d.s.P
	if !d.s.Accepted() || p.Terminating || p.Removed || d.s.HasRuntimeHistory() {
		return
	}
	var sb *pb.ObservedSandbox
	for _, o := range obs.GetSandboxes() {
		if sb == nil || o.Attempt > sb.Attempt || (o.Attempt == sb.Attempt && o.Ready && !sb.Ready) {
			sb = o
		}
	}
	if sb == nil {
		return
	}
	d.emit(&pb.Event{Kind: &pb.Event_SandboxRequested{SandboxRequested: &pb.SandboxRequested{Attempt: sb.Attempt}}})
	d.emit(&pb.Event{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{
		Attempt: sb.Attempt, SandboxId: sb.Id, Ip: sb.Ip, Recovered: true, Epoch: d.viewEpoch}}})

	newest := map[string]*pb.ObservedContainer{}
	for _, c := range obs.GetContainers() {
		if c.SandboxId != sb.Id || d.s.specContainer(c.Name) == nil {
			continue
		}
		if o := newest[c.Name]; o == nil || c.Attempt > o.Attempt {
			newest[c.Name] = c
		}
	}
	names := make([]string, 0, len(newest))
	for name := range newest {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		d.adoptContainer(newest[name])
	}

	if !sb.Ready {
		if phase := computePhase(d.s, d.now); phase == corev1.PodSucceeded || phase == corev1.PodFailed {
			d.emit(&pb.Event{Kind: &pb.Event_SandboxStopped{SandboxStopped: &pb.SandboxStopped{SandboxId: sb.Id}}})
		} else {
			d.emit(&pb.Event{Kind: &pb.Event_SandboxLost{SandboxLost: &pb.SandboxLost{
				SandboxId: sb.Id, Reason: "SandboxNotReady"}}})
		}
	}
}

// HasRuntimeHistory reports whether the state records any runtime object
// (a sandbox or container ID): a pod without is one whose runtime objects,
// if the runtime holds any, can only be adopted (see adopt).
func (s *State) HasRuntimeHistory() bool {
	for _, sb := range s.Sandboxes() {
		if sb.Id != "" {
			return true
		}
	}
	for _, r := range s.P.Containers {
		if r.Id != "" || len(r.DeadIds) > 0 {
			return true
		}
	}
	return false
}

func (d *decider) adoptContainer(c *pb.ObservedContainer) {
	d.emit(&pb.Event{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{
		Name: c.Name, Attempt: c.Attempt, Adopted: true, RestartCount: c.RestartCount}}})
	d.emit(&pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{
		Name: c.Name, Attempt: c.Attempt, ContainerId: c.Id, Recovered: true, Epoch: d.viewEpoch}}})
	r := d.s.P.Containers[c.Name]
	switch c.State {
	case pb.ObservedState_OBSERVED_RUNNING:
		d.started(r, c.StartedAtUnixNano, true)
	case pb.ObservedState_OBSERVED_EXITED:
		if c.StartedAtUnixNano != 0 {
			d.started(r, c.StartedAtUnixNano, true)
		}
		d.exited(r, c.ExitCode, c.Reason, c.Message, c.StartedAtUnixNano, c.FinishedAtUnixNano, false)
		if !d.restartWanted(r) {
			return
		}
		// The back-off owed after restart_count restarts and this exit.
		var prev time.Duration
		if c.RestartCount > 0 {
			prev = min(d.cfg.BackoffInitial<<min(c.RestartCount-1, 16), d.cfg.BackoffMax)
		}
		finished := time.Unix(0, r.FinishedAtUnixNano)
		if c.StartedAtUnixNano != 0 && finished.Sub(time.Unix(0, c.StartedAtUnixNano)) >= d.cfg.BackoffReset {
			prev = 0
		}
		d.backoff(r, finished, prev, "CrashLoopBackOff",
			fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", prev, r.Name, d.podRef()))
	}
}
