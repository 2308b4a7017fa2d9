package sim

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// finalChecks runs at the end of the node's quiet time: every pod
// converged to what its spec implies, statuses agree with the runtime, no
// orphan is left, no pod is lost.
func (n *Node) finalChecks() {
	for _, sp := range n.workload {
		n.checkPod(sp)
	}
	n.checkOrphans()
}

func (n *Node) checkPod(sp *simPod) {
	uid := string(sp.pod.UID)
	n.check.checks++
	if n.down {
		n.violate(uid, "the node is still down at the end")
		return
	}
	if sp.gone {
		if p := n.pods[uid]; p != nil {
			n.violate(uid, fmt.Sprintf("deleted pod still has a shell (phase %s)", n.phase(p)))
		}
		stream, err := n.j.Load(context.Background(), uid)
		switch {
		case errors.Is(err, journal.ErrNotFound):
		case err != nil:
			n.violate(uid, fmt.Sprintf("deleted pod's journal cannot be read: %v", err))
		default:
			st, err := actors.Restore(uid, stream.Snapshot, stream.Events)
			if err != nil || !st.Done() {
				n.violate(uid, "deleted pod is not done in its journal")
			}
		}
		if objs := n.runtimeObjects(uid); objs != "" {
			n.violate(uid, "deleted pod left "+objs+" in the runtime")
		}
		return
	}
	p := n.pods[uid]
	if p == nil || !p.state().Accepted() {
		n.violate(uid, "lost: the pod is desired but the node does not run it")
		return
	}
	want := corev1.PodRunning
	switch sp.kind {
	case JobNever:
		want = corev1.PodSucceeded
		if sp.exit != 0 {
			want = corev1.PodFailed
		}
	case JobOnFailure:
		want = corev1.PodSucceeded
	}
	if got := n.phase(p); got != want {
		n.violate(uid, fmt.Sprintf("did not converge: %s pod is %s, want %s", sp.kind, got, want))
		return
	}
	if want == corev1.PodRunning && sp.kind != CrashLoop {
		for _, ctr := range p.state().Pod.Spec.Containers {
			r := p.state().P.Containers[ctr.Name]
			if r == nil || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
				n.violate(uid, fmt.Sprintf("did not converge: container %s of a %s pod is not running", ctr.Name, sp.kind))
			}
		}
	}
	n.checkAgrees(p)
}

// checkAgrees compares the journal's containers with the runtime's.
func (n *Node) checkAgrees(p *shell) {
	for _, name := range sortedKeys(p.state().P.Containers) {
		r := p.state().P.Containers[name]
		if r.Id == "" {
			continue
		}
		n.check.checks++
		resp, err := n.rt.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: r.Id})
		var state runtimeapi.ContainerState = -1
		if err == nil {
			state = resp.GetStatus().GetState()
		}
		switch r.Phase {
		case pb.ContainerPhase_CONTAINER_RUNNING:
			if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
				n.violate(p.uid, fmt.Sprintf("status says %s runs as %s, the runtime has it %v", name, short(r.Id), stateName(state)))
			}
		case pb.ContainerPhase_CONTAINER_EXITED:
			if state == runtimeapi.ContainerState_CONTAINER_RUNNING {
				n.violate(p.uid, fmt.Sprintf("status says %s (%s) exited, the runtime has it running", name, short(r.Id)))
			}
			if state == runtimeapi.ContainerState_CONTAINER_EXITED && resp.GetStatus().GetExitCode() != r.ExitCode {
				n.violate(p.uid, fmt.Sprintf("status says %s exited with %d, the runtime says %d", name, r.ExitCode, resp.GetStatus().GetExitCode()))
			}
		}
	}
	if sb := p.state().P.Sandbox; sb != nil && sb.Phase == pb.SandboxPhase_SANDBOX_READY {
		n.check.checks++
		resp, err := n.rt.PodSandboxStatus(context.Background(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.Id})
		if err != nil || resp.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			n.violate(p.uid, fmt.Sprintf("status says sandbox %s is ready, the runtime does not", short(sb.Id)))
		}
	}
}

func stateName(s runtimeapi.ContainerState) string {
	if s < 0 {
		return "absent"
	}
	return s.String()
}

// runtimeObjects describes what the runtime holds of pod uid ("" if nothing).
func (n *Node) runtimeObjects(uid string) string {
	sel := map[string]string{cri.LabelPodUID: uid}
	sbs, _ := n.rt.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	cs, _ := n.rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if len(sbs.GetItems())+len(cs.GetContainers()) == 0 {
		return ""
	}
	return fmt.Sprintf("%d sandboxes and %d containers", len(sbs.GetItems()), len(cs.GetContainers()))
}

// checkOrphans finds runtime objects of pods the node's source does not hold.
func (n *Node) checkOrphans() {
	sbs, _ := n.rt.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{})
	cs, _ := n.rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{})
	seen := map[string]bool{}
	for _, sb := range sbs.GetItems() {
		seen[sb.GetLabels()[cri.LabelPodUID]] = true
	}
	for _, c := range cs.GetContainers() {
		seen[c.GetLabels()[cri.LabelPodUID]] = true
	}
	for _, uid := range sortedKeys(seen) {
		n.check.checks++
		if _, ok := n.desired[uid]; !ok {
			n.violate(uid, "orphan: the runtime holds "+n.runtimeObjects(uid)+" of a pod the node does not have")
		}
	}
}
