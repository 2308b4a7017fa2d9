package nodeactor

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// Config is a NodeActor's configuration.
type Config struct {
	NodeName string
	// Client acts as the node (system:node:<name>): the Node authorizer and
	// NodeRestriction limit it to its own Node, Lease and pods.
	Client kubernetes.Interface
	// Labels and Taints go on the Node when it is registered
	// (--node-labels, --register-with-taints).
	Labels  map[string]string
	Taints  []corev1.Taint
	Machine Machine
	// Health tells the runtime's state; it is called on the actor's
	// goroutine with a deadline.
	Health func(ctx context.Context) RuntimeHealth
	// Pressure, when set, gives the node's pressure conditions (the
	// eviction manager's); it must not block.
	Pressure func() []corev1.NodeCondition
	// StatusUpdateFrequency: how often the status is computed and sent if
	// it changed (default 10s); StatusReportFrequency: how often it is sent
	// when nothing changed (default 5m).
	StatusUpdateFrequency, StatusReportFrequency time.Duration
	// LeaseDuration (default 40s) and RenewInterval (default 10s) of the
	// node's Lease in kube-node-lease.
	LeaseDuration, RenewInterval time.Duration
	// CallTimeout bounds each API call (default 10s).
	CallTimeout time.Duration
	Clock       clock.WithDelayedExecution
	Logger      *zap.Logger
	// Events records the kubelet's node events (Starting, NodeReady,
	// NodeNotReady) on the Node; nil: none.
	Events record.EventRecorder
	// Nodes, when set, is where the periodic check reads the Node (a
	// lister of an informer the caller runs, shared by a fleet's nodes)
	// instead of a GET from the API server's watch cache; a Node it does
	// not find is read with that GET before it counts as gone. nil: the GET.
	Nodes NodeGetter
}

// NodeGetter reads a Node from a cache (client-go's NodeLister is one). The
// Node is the cache's: read only. A Node it does not hold is an error that
// apierrors.IsNotFound tells.
type NodeGetter interface {
	Get(name string) (*corev1.Node, error)
}

func (c *Config) defaults() {
	if c.StatusUpdateFrequency == 0 {
		c.StatusUpdateFrequency = 10 * time.Second
	}
	if c.StatusReportFrequency == 0 {
		c.StatusReportFrequency = 5 * time.Minute
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = 40 * time.Second
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = 10 * time.Second
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 10 * time.Second
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Props makes the NodeActor's props. Spawn it once per node.
func Props(cfg Config) *actor.Props {
	cfg.defaults()
	return actor.PropsFromProducer(func() actor.Actor { return &nodeActor{cfg: cfg} })
}

type (
	statusTick struct{} // the periodic status update
	resync     struct{} // an extra one (the Node must be registered again)
	leaseTick  struct{}
	// newOwner tells the leaseActor the Node registered again (a new UID).
	newOwner struct{ node *corev1.Node }
)

// nodeActor registers the Node and sends its status; its child leaseActor
// renews the Lease, so a slow status update never delays a renewal.
type nodeActor struct {
	cfg        Config
	node       *corev1.Node // as last registered or updated; nil: not registered
	last       *corev1.NodeStatus
	lastReport time.Time
	lease      *actor.PID
	started    bool // the Starting event was recorded
}

func (a *nodeActor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started, statusTick:
		a.sync(ctx)
		after(ctx, a.cfg.Clock, a.cfg.StatusUpdateFrequency, statusTick{})
	case resync:
		a.sync(ctx)
	}
}

// sync registers the Node if needed, then sends its status when it changed
// or the report is due.
func (a *nodeActor) sync(ctx actor.Context) {
	log := a.cfg.Logger
	if !a.started {
		a.started = true
		a.event("Starting", "Starting kubelet.")
	}
	if a.node == nil {
		node, err := a.register()
		if err != nil {
			log.Warn("cannot register the node; retrying", zap.Error(err))
			return
		}
		a.node, a.last = node, nil
		log.Info("node registered", zap.String("uid", string(node.UID)))
		if a.lease == nil {
			a.lease = ctx.Spawn(actor.PropsFromProducer(func() actor.Actor {
				return &leaseActor{cfg: a.cfg, owner: node}
			}))
		} else {
			ctx.Send(a.lease, newOwner{node: node})
		}
	}
	c, cancel := context.WithTimeout(context.Background(), a.cfg.CallTimeout)
	rt := a.cfg.Health(c)
	cancel()
	now := a.cfg.Clock.Now()
	var pressure []corev1.NodeCondition
	if a.cfg.Pressure != nil {
		pressure = a.cfg.Pressure()
	}
	st := Status(a.last, a.cfg.Machine, rt, pressure, now)
	due := changed(a.last, st) || now.Sub(a.lastReport) >= a.cfg.StatusReportFrequency
	var err error
	if !due {
		// Nothing new to send; is the Node still there, and does it still
		// say what was sent? (The kubelet reads it every period too.) The
		// node lifecycle controller sets Ready Unknown when the lease
		// lapses, say across an API server outage: the status is sent
		// again then, with the transition times counted from the server's.
		err = a.check()
		if err == nil && differs(&a.node.Status, st) {
			st, due = Status(&a.node.Status, a.cfg.Machine, rt, pressure, now), true
		}
	}
	if due && err == nil {
		err = a.sendStatus(st)
	}
	if apierrors.IsNotFound(err) {
		log.Warn("the node's Node object is gone: registering again")
		a.node = nil
		ctx.Send(ctx.Self(), resync{})
		return
	}
	if err != nil {
		log.Warn("cannot update the node status; retrying", zap.Error(err))
		return
	}
	if !due {
		return
	}
	for _, pe := range pressureEvents {
		c, prev := condition(&st, pe.typ), (*corev1.NodeCondition)(nil)
		if a.last != nil {
			prev = condition(a.last, pe.typ)
		}
		if c == nil || (prev != nil && prev.Status == c.Status) {
			continue
		}
		reason := pe.relieved
		if c.Status == corev1.ConditionTrue {
			reason = pe.pressed
		}
		a.event(reason, fmt.Sprintf("Node %s status is now: %s", a.cfg.NodeName, reason))
	}
	if r := Ready(&st); a.last == nil || Ready(a.last).Status != r.Status {
		log.Info("node status", zap.String("ready", string(r.Status)), zap.String("reason", r.Reason))
		reason := "NodeNotReady"
		if r.Status == corev1.ConditionTrue {
			reason = "NodeReady"
		}
		a.event(reason, fmt.Sprintf("Node %s status is now: %s", a.cfg.NodeName, reason))
	}
	a.last, a.lastReport = &st, now
}

// pressureEvents are the kubelet's events of its pressure conditions, in
// the order its status setters run (before NodeReady): each is recorded
// when the condition is first set and whenever its status changes.
var pressureEvents = []struct {
	typ               corev1.NodeConditionType
	pressed, relieved string
}{
	{corev1.NodeMemoryPressure, "NodeHasInsufficientMemory", "NodeHasSufficientMemory"},
	{corev1.NodeDiskPressure, "NodeHasDiskPressure", "NodeHasNoDiskPressure"},
	{corev1.NodePIDPressure, "NodeHasInsufficientPID", "NodeHasSufficientPID"},
}

// event records a Normal event on the Node, referenced as the kubelet
// references it (UID: the node's name).
func (a *nodeActor) event(reason, msg string) {
	if a.cfg.Events == nil {
		return
	}
	ref := &corev1.ObjectReference{Kind: "Node", Name: a.cfg.NodeName, UID: types.UID(a.cfg.NodeName)}
	a.cfg.Events.Event(ref, corev1.EventTypeNormal, reason, msg)
}

// check reads the Node, to notice its deletion or a status someone else
// changed. It reads from the API server's watch cache (resourceVersion
// "0"), as the kubelet's status updates do on their first try: a read per
// node every status period must not be a quorum read of etcd (at 1,000
// nodes, 100 of them a second); a stale answer is corrected the next
// period. With Config.Nodes it reads that cache instead, as stale at
// worst as the watch cache: a fleet's 1,000 nodes' reads were 100 GETs a
// second, 41 MB of the 304 MB it allocated in 40 s of a steady state, for
// Nodes its informer holds already. A Node the cache does not hold (not
// seen yet, or deleted), or holds with another UID (ours registered again
// since, or replaced), is read with the GET: only the API server says that
// ours is gone.
func (a *nodeActor) check() error {
	if a.cfg.Nodes != nil {
		node, err := a.cfg.Nodes.Get(a.cfg.NodeName)
		switch {
		case err == nil && node.UID == a.node.UID:
			a.node = node
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CallTimeout)
	defer cancel()
	node, err := a.cfg.Client.CoreV1().Nodes().Get(ctx, a.cfg.NodeName, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	if node.UID != a.node.UID {
		return apierrors.NewNotFound(corev1.Resource("nodes"), a.cfg.NodeName) // replaced: ours is gone
	}
	a.node = node
	return nil
}

// register creates the Node, or takes the existing one of this name.
func (a *nodeActor) register() (*corev1.Node, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CallTimeout)
	defer cancel()
	labels := map[string]string{
		corev1.LabelHostname: a.cfg.NodeName, corev1.LabelOSStable: runtime.GOOS, corev1.LabelArchStable: runtime.GOARCH,
	}
	for k, v := range a.cfg.Labels {
		labels[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: a.cfg.NodeName, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: a.cfg.Taints},
	}
	created, err := a.cfg.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return a.cfg.Client.CoreV1().Nodes().Get(ctx, a.cfg.NodeName, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("create node %s: %w", a.cfg.NodeName, err)
	}
	return created, nil
}

// sendStatus patches the status subresource of the Node, as the kubelet
// does: a strategic merge patch of the status only, so that conditions other
// components own stay, and the spec (taints the node-lifecycle controller
// adds, which NodeRestriction forbids a node to change) is never sent. The
// patch carries the Node's UID: a Node deleted and created again by someone
// else is not written to, the actor registers it as its own again.
func (a *nodeActor) sendStatus(st corev1.NodeStatus) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CallTimeout)
	defer cancel()
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": a.node.UID},
		"status":   st,
	})
	if err != nil {
		return fmt.Errorf("node %s: encode status patch: %w", a.cfg.NodeName, err)
	}
	updated, err := a.cfg.Client.CoreV1().Nodes().Patch(ctx, a.cfg.NodeName, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if apierrors.IsConflict(err) {
		// The UID precondition failed: check tells NotFound if ours is gone.
		if cerr := a.check(); cerr != nil {
			return cerr
		}
		return err
	}
	if err != nil {
		return err
	}
	a.node = updated
	return nil
}

// after sends msg to the actor itself after d on clk.
func after(ctx actor.Context, clk clock.WithDelayedExecution, d time.Duration, msg any) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	clk.AfterFunc(d, func() { root.Send(self, msg) })
}
