package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// staleAfter is the Lease duration of both sides (the kubelet's default):
// a Lease not renewed for longer makes the node lifecycle controller mark
// its node NotReady.
const staleAfter = 40 * time.Second

// leaseStats is what the watch saw of the nodes' Leases and readiness in one
// phase.
type leaseStats struct {
	// Stale is how many Leases were, at some moment, older than staleAfter.
	Stale int
	// LongestGap is the longest time one Lease went without renewal (between
	// two renewals, or from the last renewal to a sweep).
	LongestGap time.Duration
	// NotReady is how many nodes reported Ready=False or Unknown after having
	// been Ready.
	NotReady int
}

// watch follows the bench's Nodes, their Leases and the bench's pods through
// informers (one list and one watch each, so that watching costs the API
// server next to nothing) and keeps per-phase Lease statistics.
type watch struct {
	prefix  string // node names
	pods    cache.Indexer
	nodes   cache.Indexer
	leases  cache.Indexer
	mu      sync.Mutex
	stale   map[string]bool
	gap     time.Duration
	wasUp   map[string]bool
	downNow map[string]bool
}

// startWatch starts the informers and the sweep of the Leases; they stop
// with ctx.
func startWatch(ctx context.Context, cs kubernetes.Interface, namespace, prefix string) (*watch, error) {
	w := &watch{prefix: prefix, stale: map[string]bool{}, wasUp: map[string]bool{}, downNow: map[string]bool{}}
	all := informers.NewSharedInformerFactory(cs, 0)
	pods := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	leases := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(corev1.NamespaceNodeLease))
	pi := pods.Core().V1().Pods().Informer()
	ni := all.Core().V1().Nodes().Informer()
	li := leases.Coordination().V1().Leases().Informer()
	if _, err := ni.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.node(o) },
		UpdateFunc: func(_, o any) { w.node(o) },
	}); err != nil {
		return nil, fmt.Errorf("node handler: %w", err)
	}
	if _, err := li.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, o any) { w.renewed(old, o) },
	}); err != nil {
		return nil, fmt.Errorf("lease handler: %w", err)
	}
	w.pods, w.nodes, w.leases = pi.GetIndexer(), ni.GetIndexer(), li.GetIndexer()
	for _, f := range []informers.SharedInformerFactory{all, pods, leases} {
		f.Start(ctx.Done())
	}
	for _, s := range []cache.InformerSynced{pi.HasSynced, ni.HasSynced, li.HasSynced} {
		if !cache.WaitForCacheSync(ctx.Done(), s) {
			return nil, fmt.Errorf("informers not synced: %w", ctx.Err())
		}
	}
	go w.sweep(ctx)
	return w, nil
}

func (w *watch) node(o any) {
	n, ok := o.(*corev1.Node)
	if !ok || !strings.HasPrefix(n.Name, w.prefix) {
		return
	}
	ready := nodeReady(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ready {
		w.wasUp[n.Name] = true
		return
	}
	if w.wasUp[n.Name] {
		w.downNow[n.Name] = true
	}
}

func (w *watch) renewed(old, o any) {
	a, ok1 := old.(*coordinationv1.Lease)
	b, ok2 := o.(*coordinationv1.Lease)
	if !ok1 || !ok2 || !strings.HasPrefix(b.Name, w.prefix) || a.Spec.RenewTime == nil || b.Spec.RenewTime == nil {
		return
	}
	w.noteGap(b.Name, b.Spec.RenewTime.Sub(a.Spec.RenewTime.Time))
}

func (w *watch) noteGap(name string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gap = max(w.gap, d)
	if d > staleAfter {
		w.stale[name] = true
	}
}

// sweep checks every second how old each Lease is, so that a Lease never
// renewed again counts too.
func (w *watch) sweep(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, o := range w.leases.List() {
				l, ok := o.(*coordinationv1.Lease)
				if ok && strings.HasPrefix(l.Name, w.prefix) && l.Spec.RenewTime != nil {
					w.noteGap(l.Name, now.Sub(l.Spec.RenewTime.Time))
				}
			}
		}
	}
}

// peek returns the statistics since the last take, keeping them.
func (w *watch) peek() leaseStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statsLocked()
}

// take returns the statistics since the last take and starts new ones.
func (w *watch) take() leaseStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.statsLocked()
	w.stale, w.gap, w.downNow = map[string]bool{}, 0, map[string]bool{}
	return s
}

// statsLocked is the statistics since the last take; w.mu is held.
func (w *watch) statsLocked() leaseStats {
	return leaseStats{Stale: len(w.stale), LongestGap: w.gap, NotReady: len(w.downNow)}
}

// readyNodes counts the bench's nodes that are Ready.
func (w *watch) readyNodes() int {
	n := 0
	for _, o := range w.nodes.List() {
		if node, ok := o.(*corev1.Node); ok && strings.HasPrefix(node.Name, w.prefix) && nodeReady(node) {
			n++
		}
	}
	return n
}

// readyNodeNames are the names of the bench's Ready nodes, sorted.
func (w *watch) readyNodeNames() []string {
	var names []string
	for _, o := range w.nodes.List() {
		if node, ok := o.(*corev1.Node); ok && strings.HasPrefix(node.Name, w.prefix) && nodeReady(node) {
			names = append(names, node.Name)
		}
	}
	slices.Sort(names)
	return names
}

// podCounts counts the bench's pods: all of them, and those that count as
// up (see podUp).
func (w *watch) podCounts() (total, up int) {
	for _, o := range w.pods.List() {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		total++
		if podUp(p) {
			up++
		}
	}
	return total, up
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podUp is whether a pod got where it should: Running and not being
// deleted, or, for a crash-looping pod (label role=crash), restarted at
// least once.
func podUp(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	if p.Labels[roleLabel] == roleCrash {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > 0 {
				return true
			}
		}
		return false
	}
	return p.Status.Phase == corev1.PodRunning
}

// faultySummary says how the faulty pods behave: the restarts of the
// crash-looping ones, and how many probe-failing ones are Ready (none should
// be).
func (w *watch) faultySummary() string {
	var restarts int32
	crash, probe, probeReady := 0, 0, 0
	for _, o := range w.pods.List() {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		switch p.Labels[roleLabel] {
		case roleCrash:
			crash++
			for _, c := range p.Status.ContainerStatuses {
				restarts += c.RestartCount
			}
		case roleProbeBad:
			probe++
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					probeReady++
				}
			}
		}
	}
	return fmt.Sprintf("%d crash-looping pods with %d restarts in all; %d of %d probe-failing pods Ready", crash, restarts, probeReady, probe)
}
