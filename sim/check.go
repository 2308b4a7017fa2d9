package sim

import (
	"context"
	"fmt"
	"slices"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/faults"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Violation is an invariant found broken.
type Violation struct {
	// Step is the step after which it was found (Options.StopAtStep with
	// this value replays the run up to it).
	Step uint64
	// At is the virtual time since the start of the run.
	At   string
	Node string
	Pod  string
	What string
}

func (v Violation) String() string {
	pod := ""
	if v.Pod != "" {
		pod = " pod " + v.Pod
	}
	return fmt.Sprintf("step %d (virtual +%s) node %s%s: %s", v.Step, v.At, v.Node, pod, v.What)
}

// checker holds what the invariants need to remember of one node; it is
// the simulation's memory, not the node process's, so it outlives the
// node's crashes. (Every invariant concerns one node: nodes share
// nothing.)
//
// The invariants, and when they are checked:
//   - at every CRI call that reaches a runtime: no sandbox or container is
//     created a second time for the same intent (pod, attempt; pod,
//     container, attempt), no second sandbox is READY for one pod, and no
//     container is started again once a start of it took effect and was
//     answered (a start whose reply was lost may be retried);
//   - at every journal append: the journal never binds an intent to a
//     second object, and restart counts never decrease;
//   - at every recovery from a crash: no pod the journal held is lost, and
//     restart counts did not go back;
//   - at the end, after the faults stopped and the node had time: every pod
//     converged to what its spec implies, statuses agree with the runtime,
//     no orphan is left in a runtime, no pod is lost.
type checker struct {
	n       *Node
	checks  uint64
	current string // the pod whose effect runs now

	sandboxIntents   map[string]string // node/uid/attempt -> sandbox ID
	containerIntents map[string]string // node/uid/name/attempt -> container ID
	starts           map[string]startRecord
	restarts         map[string]uint32 // node/uid/name -> highest restart count journaled
	live             map[string]bool   // node/uid: accepted and not removed in the journal
	benignRetries    int
	newLives         int
}

type startRecord struct {
	replyLost bool
}

func newChecker(n *Node) *checker {
	return &checker{
		n: n, sandboxIntents: map[string]string{}, containerIntents: map[string]string{},
		starts: map[string]startRecord{}, restarts: map[string]uint32{}, live: map[string]bool{},
	}
}

// observeCall checks a call that reached node n's runtime.
func (n *Node) observeCall(method string, args, resp any, err error, act faults.Action) {
	c := n.check
	switch method {
	case "RunPodSandbox":
		c.checks++
		if err != nil {
			return
		}
		req := args.(*runtimeapi.RunPodSandboxRequest)
		uid := req.GetConfig().GetLabels()[cri.LabelPodUID]
		key := fmt.Sprintf("%s/%s/%d", n.name, uid, req.GetConfig().GetMetadata().GetAttempt())
		id := resp.(*runtimeapi.RunPodSandboxResponse).GetPodSandboxId()
		if prev, ok := c.sandboxIntents[key]; ok && prev != id {
			n.violate(uid, fmt.Sprintf("a second sandbox (%s) was created for sandbox attempt %d, which already had %s", short(id), req.GetConfig().GetMetadata().GetAttempt(), short(prev)))
		}
		c.sandboxIntents[key] = id
		list, lerr := n.rt.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
			LabelSelector: map[string]string{cri.LabelPodUID: uid},
			State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}})
		if lerr == nil && len(list.GetItems()) > 1 {
			n.violate(uid, fmt.Sprintf("%d sandboxes of the pod are READY at once", len(list.GetItems())))
		}
	case "CreateContainer":
		c.checks++
		if err != nil {
			return
		}
		req := args.(*runtimeapi.CreateContainerRequest)
		l := req.GetConfig().GetLabels()
		uid, name := l[cri.LabelPodUID], l[cri.LabelContainerName]
		key := fmt.Sprintf("%s/%s/%s/%d", n.name, uid, name, req.GetConfig().GetMetadata().GetAttempt())
		id := resp.(*runtimeapi.CreateContainerResponse).GetContainerId()
		if prev, ok := c.containerIntents[key]; ok && prev != id {
			n.violate(uid, fmt.Sprintf("a second container (%s) was created for %s attempt %d, which already had %s", short(id), name, req.GetConfig().GetMetadata().GetAttempt(), short(prev)))
		}
		c.containerIntents[key] = id
	case "StartContainer":
		c.checks++
		id := args.(*runtimeapi.StartContainerRequest).GetContainerId()
		key := n.name + "/" + id
		if prev, ok := c.starts[key]; ok {
			if !prev.replyLost {
				n.violate(c.current, fmt.Sprintf("container %s was started a second time: an earlier start took effect and was answered", short(id)))
			} else {
				c.benignRetries++ // a start whose reply was lost, tried again
			}
		}
		if err == nil {
			c.starts[key] = startRecord{replyLost: act == faults.FailAfter || act == faults.HangAfter}
		}
	}
}

// effectSucceeded notes an effect whose success its shell heard.
func (c *checker) effectSucceeded(e lifecycle.Effect) {
	if s, ok := e.(lifecycle.StartContainer); ok {
		key := c.n.name + "/" + s.ID
		if r, ok := c.starts[key]; ok {
			r.replyLost = false
			c.starts[key] = r
		}
	}
}

// appended checks the events a shell just journaled.
func (c *checker) appended(p *shell, prev *lifecycle.State, events []*pb.Envelope) {
	n := c.n
	for _, env := range events {
		c.checks++
		switch ev := env.GetEvent().GetKind().(type) {
		case *pb.Event_PodAccepted:
			if prev.P.Removed {
				// A new life of the UID (lifecycle.Apply): its restart
				// counts start again. It happens when a node recovers a pod
				// it had removed while the source still shows it (being
				// deleted); the new life is terminated at once.
				c.newLives++
				for _, name := range sortedKeys(prev.P.Containers) {
					delete(c.restarts, n.name+"/"+p.uid+"/"+name)
				}
			}
		case *pb.Event_SandboxCreated:
			e := ev.SandboxCreated
			key := fmt.Sprintf("%s/%s/%d", n.name, p.uid, e.Attempt)
			if prev, ok := c.sandboxIntents[key]; ok && prev != e.SandboxId {
				n.violate(p.uid, fmt.Sprintf("the journal binds sandbox attempt %d to %s, but the runtime created %s for it", e.Attempt, short(e.SandboxId), short(prev)))
			}
		case *pb.Event_ContainerCreated:
			e := ev.ContainerCreated
			key := fmt.Sprintf("%s/%s/%s/%d", n.name, p.uid, e.Name, e.Attempt)
			if prev, ok := c.containerIntents[key]; ok && prev != e.ContainerId {
				n.violate(p.uid, fmt.Sprintf("the journal binds %s attempt %d to %s, but the runtime created %s for it", e.Name, e.Attempt, short(e.ContainerId), short(prev)))
			}
		}
	}
	c.checkRestarts(p.uid, p.state())
	live := p.state().Accepted() && !p.state().P.Removed
	if live {
		c.live[n.name+"/"+p.uid] = true
	} else {
		delete(c.live, n.name+"/"+p.uid)
	}
}

func (c *checker) checkRestarts(uid string, st *lifecycle.State) {
	n := c.n
	for _, name := range sortedKeys(st.P.Containers) {
		c.checks++
		r := st.P.Containers[name]
		key := n.name + "/" + uid + "/" + name
		if max, ok := c.restarts[key]; ok && r.RestartCount < max {
			n.violate(uid, fmt.Sprintf("the restart count of %s went down from %d to %d", name, max, r.RestartCount))
		}
		if r.RestartCount > c.restarts[key] {
			c.restarts[key] = r.RestartCount
		}
	}
}

// recovered checks what the node recovered from its journal after a crash.
func (c *checker) recovered(states map[string]*lifecycle.State) {
	n := c.n
	prefix := n.name + "/"
	var lost []string
	for key := range c.live {
		if uid, ok := cutPrefix(key, prefix); ok {
			c.checks++
			if st := states[uid]; st == nil || !st.Accepted() {
				lost = append(lost, uid)
			}
		}
	}
	slices.Sort(lost)
	for _, uid := range lost {
		n.violate(uid, "the pod was accepted before the crash and its journal lost it")
	}
	for _, uid := range sortedKeys(states) {
		c.checkRestarts(uid, states[uid])
	}
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// short abbreviates a 64-hex ID.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
