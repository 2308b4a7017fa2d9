package sim

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/faults"
)

// The node's runtime watcher, as cri.Watcher does it (which runs its own
// goroutine, so it is played here): each container event leads to a
// listing of its pod, a full listing every relistPeriod is the safety net,
// and a broken event stream is subscribed again after a second, followed
// by a full listing. Only views that changed are given to the shells.
// Event faults (drop, duplicate, reorder, break) are decided by the fault
// plan's faults.DecideEvent, per stream and event number. Not played: the
// watcher's full listing in place of a burst of ListPods (cri's manyPods),
// which changes when views arrive, not what they show.

// relistPeriod is cri.WatchOptions.EventedRelistPeriod's default.
const relistPeriod = cri.DefaultEventedRelistPeriod

// eventDelay is how long after a runtime change its pod is listed.
const eventDelay = 5 * time.Millisecond

// pumpEvents takes the runtime's new events (after every step that
// concerned the node) and applies the event faults to them.
func (n *Node) pumpEvents() {
	if n.sub == nil || n.down {
		return
	}
	evs, open := n.sub.Take()
	for _, ev := range evs {
		k := n.eventNo
		n.eventNo++
		act := faults.Deliver
		if n.faultsOn() && n.plan != nil {
			act = faults.DecideEvent(n.plan.Events, n.faultSeed, n.streamNo, k)
		}
		switch act {
		case faults.Drop:
			n.countFault(string(faults.KindEventDrop))
			continue
		case faults.Duplicate:
			n.countFault(string(faults.KindEventDuplicate))
			n.eventFor(ev, eventDelay)
		case faults.Reorder:
			n.countFault(string(faults.KindEventReorder))
			window := time.Duration(n.plan.Events.ReorderWindow)
			if window <= 0 {
				window = faults.DefaultReorderWindow
			}
			n.eventFor(ev, window)
			continue
		case faults.Break:
			n.countFault(string(faults.KindStreamBreak))
			open = false
		}
		if !open {
			break
		}
		n.eventFor(ev, eventDelay)
	}
	if !open {
		n.sub.Close()
		n.sub = nil
		n.after(time.Second, n.resubscribe)
	}
}

// resubscribe opens a new event stream and lists everything, since events
// of the gap were missed.
func (n *Node) resubscribe() {
	n.sub = n.rt.Subscribe()
	n.streamNo++
	n.eventNo = 0
	n.listAll()
}

// eventFor lists the event's pod after d (coalesced per pod).
func (n *Node) eventFor(ev *runtimeapi.ContainerEventResponse, d time.Duration) {
	uid := ev.GetPodSandboxStatus().GetLabels()[cri.LabelPodUID]
	if uid == "" || n.relistPending[uid] {
		return
	}
	n.relistPending[uid] = true
	n.after(d, func() {
		delete(n.relistPending, uid)
		n.delay = 0
		epoch := n.epochs.Next()
		v, err := n.client.ListPod(context.Background(), uid)
		if err != nil {
			return // the next full listing makes up for it
		}
		v.Epoch, v.Returned = epoch, n.epochs.Now()
		n.after(n.delay, func() { n.report(uid, v) })
	})
}

// relistAll is the periodic safety listing.
func (n *Node) relistAll() {
	n.listAll()
	n.after(relistPeriod, n.relistAll)
}

func (n *Node) listAll() {
	n.delay = 0
	listedAt, epoch := n.clock.Now(), n.epochs.Next()
	views, err := n.client.ListPodsKnown(context.Background(), knownFrom(n.lastView))
	if err != nil {
		return
	}
	returned := n.epochs.Now()
	n.after(n.delay, func() {
		for _, uid := range sortedKeys(views) {
			views[uid].Epoch, views[uid].Returned = epoch, returned
			n.report(uid, views[uid])
		}
		for _, uid := range sortedKeys(n.lastView) {
			if _, ok := views[uid]; !ok && !n.lastView[uid].Empty() {
				n.report(uid, &cri.PodView{UID: uid, ListedAt: listedAt, Epoch: epoch, Returned: returned})
			}
		}
	})
}

// report gives a changed view to the pod's shell; objects of a pod without
// a shell get one (it loads the pod's journal, if any, and removes what
// nothing explains).
func (n *Node) report(uid string, v *cri.PodView) {
	if n.down {
		return
	}
	if last := n.lastView[uid]; last != nil && last.Equal(v) {
		return
	}
	n.lastView[uid] = v
	p := n.pods[uid]
	if p == nil {
		if v.Empty() {
			return
		}
		p = n.spawn(uid, nil)
	}
	n.observe(p, v)
}

// knownFrom describes the objects of the views last reported, so that a
// full listing asks the runtime only about objects whose state changed, as
// cri.Watcher does with what it reported.
func knownFrom(views map[string]*cri.PodView) *cri.Known {
	k := &cri.Known{Sandboxes: map[string]cri.Sandbox{}, Containers: map[string]cri.Container{}}
	for _, v := range views {
		for _, sb := range v.Sandboxes {
			k.Sandboxes[sb.ID] = sb
		}
		for _, c := range v.Containers {
			k.Containers[c.ID] = c
		}
	}
	return k
}
