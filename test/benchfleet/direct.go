package main

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"golang.org/x/time/rate"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The placements of -placement.
const (
	// placementScheduler: the pods are a Deployment's; the ReplicaSet
	// controller creates them, kube-scheduler binds them, scaling to 0
	// deletes them. What issue 15's side-by-side table measures.
	placementScheduler = "scheduler"
	// placementDirect: the bench creates the pods itself, each already
	// bound to a node (spec.nodeName, round-robin over the side's nodes),
	// and deletes them one by one. Neither controller nor scheduler is on
	// the path: for measuring how many pods the nodes hold, where at
	// 30,000 pods and more kube-scheduler and the ReplicaSet controller
	// sharing the 2 cores were the limit.
	placementDirect = "direct"
)

// directLimiter is -direct-rate's limiter for one phase's creations, or
// for its deletions -delete-rate's (-direct-rate's when that is not set),
// with -placement direct; nil when there is none.
func (c *config) directLimiter(deletions bool) *rate.Limiter {
	r := c.directRate
	if deletions && c.deleteRate >= 0 {
		r = c.deleteRate
	}
	if c.placement != placementDirect || r <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(r), 1)
}

// directPace is the table's note of -direct-rate and -delete-rate ("" when
// neither bounds anything, as without -placement direct).
func (c *config) directPace() string {
	create, del := c.directLimiter(false), c.directLimiter(true)
	switch {
	case create == nil && del == nil:
		return ""
	case create != nil && del != nil && create.Limit() == del.Limit():
		return fmt.Sprintf("\npods created and deleted at %g a second at most\n", float64(create.Limit()))
	}
	pace := func(l *rate.Limiter) string {
		if l == nil {
			return "as fast as the API server took them"
		}
		return fmt.Sprintf("at %g a second at most", float64(l.Limit()))
	}
	return fmt.Sprintf("\npods created %s, deleted %s\n", pace(create), pace(del))
}

// createWorkers is how many pod creations or deletions are in flight at
// once with -placement direct.
const createWorkers = 50

// createBoundPods creates n pods of role named <name>-<i>, pod i bound to
// nodes[i%len(nodes)], createWorkers at a time and no faster than limit
// allows (nil: no limit). Pods that exist already count as created.
func createBoundPods(ctx context.Context, cs kubernetes.Interface, ns, name, role string, n int, nodes []string, limit *rate.Limiter) error {
	if len(nodes) == 0 {
		return fmt.Errorf("create %d pods of %s: no nodes to bind them to", n, name)
	}
	t := podTemplate(name, role)
	width := len(fmt.Sprint(n - 1))
	names := make([]string, n)
	node := make(map[string]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%0*d", name, width, i)
		node[names[i]] = nodes[i%len(nodes)]
	}
	var failed atomic.Int64
	var firstErr atomic.Value
	eachName(ctx, names, createWorkers, limit, func(pn string) {
		p := &corev1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
		p.Name, p.Spec.NodeName = pn, node[pn]
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			if failed.Add(1) == 1 {
				firstErr.Store(err)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("create pods of %s: %d of %d failed, the first: %v", name, f, n, firstErr.Load())
	}
	return nil
}

// deleteAllPods deletes, one by one, createWorkers at a time (and, with
// -placement direct, no faster than -delete-rate), every pod of the watched
// namespace not yet being deleted.
func (s *side) deleteAllPods(ctx context.Context) {
	var names []string
	for _, o := range s.w.pods.List() {
		if p, ok := o.(*corev1.Pod); ok && p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	if failed := deletePods(ctx, s.cs, namespace, names, createWorkers, s.cfg.directLimiter(true)); failed > 0 {
		log.Printf("%s: %d of %d pod deletions failed", s.name, failed, len(names))
	}
}
