package nodeactor

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaseNamespace holds the nodes' Leases.
const LeaseNamespace = corev1.NamespaceNodeLease

// maxLeaseBackoff caps the wait between failed renewals (the kubelet's lease
// controller's maxBackoff).
const maxLeaseBackoff = 7 * time.Second

// leaseActor renews the node's Lease every RenewInterval; a failed renewal is
// tried again sooner (200 ms, doubling up to 7 s or the interval if shorter),
// as the kubelet's lease controller: after an API server outage the lease is
// renewed within seconds of its return, well inside the node lifecycle
// controller's grace period.
type leaseActor struct {
	cfg     Config
	owner   *corev1.Node
	lease   *coordinationv1.Lease // as last written; nil: read it first
	backoff time.Duration
}

func (a *leaseActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case newOwner:
		a.owner = m.node
		a.lease = nil // read it again, and own it anew
		return
	case *actor.Started, leaseTick:
		next := a.cfg.RenewInterval
		if err := a.renew(); err != nil {
			a.backoff = min(max(2*a.backoff, 200*time.Millisecond), maxLeaseBackoff, a.cfg.RenewInterval)
			next = a.backoff
			a.cfg.Logger.Warn("cannot renew the node lease", zap.Error(err), zap.Duration("retry", next))
		} else {
			a.backoff = 0
		}
		after(ctx, a.cfg.Clock, next, leaseTick{})
	}
}

func (a *leaseActor) renew() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CallTimeout)
	defer cancel()
	leases := a.cfg.Client.CoordinationV1().Leases(LeaseNamespace)
	now := metav1.NewMicroTime(a.cfg.Clock.Now())
	if a.lease == nil {
		l, err := leases.Get(ctx, a.cfg.NodeName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			secs := int32(a.cfg.LeaseDuration / time.Second)
			l = &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: a.cfg.NodeName, Namespace: LeaseNamespace, OwnerReferences: a.ownerRefs()},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &a.cfg.NodeName, LeaseDurationSeconds: &secs, RenewTime: &now},
			}
			created, err := leases.Create(ctx, l, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			a.lease = created
			return nil
		case err != nil:
			return err
		}
		a.lease = l
	}
	l := a.lease.DeepCopy()
	l.Spec.RenewTime = &now
	l.OwnerReferences = a.ownerRefs()
	updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		a.lease = nil // read it again next time (conflict, or deleted)
		return err
	}
	a.lease = updated
	return nil
}

// ownerRefs make the Node own its Lease, so the Lease goes with it.
func (a *leaseActor) ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: a.owner.Name, UID: a.owner.UID}}
}
