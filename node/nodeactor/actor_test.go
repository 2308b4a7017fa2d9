package nodeactor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// runNode spawns a NodeActor for node-1 on client, with the given clock and
// runtime health, and stops it at the end of the test.
func runNode(t *testing.T, client kubernetes.Interface, clk *clocktesting.FakeClock, down *atomic.Bool) {
	t.Helper()
	runNodeEvents(t, client, clk, down, nil)
}

func runNodeEvents(t *testing.T, client kubernetes.Interface, clk *clocktesting.FakeClock, down *atomic.Bool, rec record.EventRecorder) {
	t.Helper()
	system := actor.NewActorSystem()
	t.Cleanup(system.Shutdown)
	system.Root.Spawn(Props(Config{
		NodeName: "node-1", Client: client, Clock: clk, Logger: zaptest.NewLogger(t), Events: rec,
		Labels: map[string]string{"tier": "test"},
		Taints: []corev1.Taint{{Key: "dedicated", Value: "test", Effect: corev1.TaintEffectNoSchedule}},
		Health: func(context.Context) RuntimeHealth {
			if down.Load() {
				return RuntimeHealth{Err: errors.New("connection refused")}
			}
			return RuntimeHealth{Name: "sim", Version: "1"}
		},
	}))
}

// eventually polls cond with a deadline (the actors run on their own goroutines).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// stepping wraps a condition so that each poll first moves the clock a
// second: each timer fires once it is due, whenever the actor armed it.
func stepping(clk *clocktesting.FakeClock) func(cond func() bool) func() bool {
	return func(cond func() bool) func() bool {
		return func() bool { clk.Step(time.Second); return cond() }
	}
}

// nodeGetter reads node-1 (an empty Node while there is none).
func nodeGetter(client kubernetes.Interface) func() *corev1.Node {
	return func() *corev1.Node {
		n, err := client.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{})
		if err != nil {
			return &corev1.Node{}
		}
		return n
	}
}

func readyOf(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func TestNodeRegistersReportsAndRenews(t *testing.T) {
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var down atomic.Bool
	rec := record.NewFakeRecorder(100)
	runNodeEvents(t, client, clk, &down, rec)
	ctx := context.Background()
	get := nodeGetter(client)
	eventually(t, "node-1 registered and Ready", func() bool { return readyOf(get()) == corev1.ConditionTrue })
	n := get()
	if n.Labels["tier"] != "test" || n.Labels[corev1.LabelHostname] != "node-1" || len(n.Spec.Taints) != 1 {
		t.Fatalf("labels %v taints %v", n.Labels, n.Spec.Taints)
	}
	lease := func() time.Time {
		l, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return time.Time{}
		}
		return l.Spec.RenewTime.Time
	}
	eventually(t, "the lease", func() bool { return !lease().IsZero() })
	first := lease()
	step := stepping(clk)
	eventually(t, "a renewal", step(func() bool { return lease().After(first) }))

	down.Store(true)
	eventually(t, "NotReady once the runtime is down", step(func() bool { return readyOf(get()) == corev1.ConditionFalse }))

	down.Store(false)
	eventually(t, "Ready again", step(func() bool { return readyOf(get()) == corev1.ConditionTrue }))
	// The kubelet's node events, in order.
	for _, want := range []string{"Normal Starting Starting kubelet.",
		"Normal NodeHasSufficientMemory Node node-1 status is now: NodeHasSufficientMemory",
		"Normal NodeHasNoDiskPressure Node node-1 status is now: NodeHasNoDiskPressure",
		"Normal NodeHasSufficientPID Node node-1 status is now: NodeHasSufficientPID",
		"Normal NodeReady Node node-1 status is now: NodeReady",
		"Normal NodeNotReady Node node-1 status is now: NodeNotReady", "Normal NodeReady Node node-1 status is now: NodeReady"} {
		nextEvent(t, rec, want)
	}

	// Deleted while nothing changes: noticed at the next period anyway.
	if err := client.CoreV1().Nodes().Delete(ctx, "node-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deletedAt := clk.Now()
	eventually(t, "node-1 registered again", step(func() bool { return readyOf(get()) == corev1.ConditionTrue }))
	if took := clk.Since(deletedAt); took > time.Minute {
		t.Fatalf("the deletion was noticed after %v of node time, not within a status period", took)
	}
}

// The status goes as a patch of the status alone: a taint the node-lifecycle
// controller put on the Node (which NodeRestriction forbids a node to change)
// and a condition another component owns survive the node's status updates.
func TestStatusLeavesSpecAndOthersConditions(t *testing.T) {
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var down atomic.Bool
	runNode(t, client, clk, &down)
	ctx := context.Background()
	get := nodeGetter(client)
	eventually(t, "node-1 registered and Ready", func() bool { return readyOf(get()) == corev1.ConditionTrue })
	n := get()
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated"})
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	step := stepping(clk)
	eventually(t, "NotReady once the runtime is down", step(func() bool { return readyOf(get()) == corev1.ConditionFalse }))
	n = get()
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[1].Key != corev1.TaintNodeNotReady {
		t.Fatalf("taints %v: the status update changed the spec", n.Spec.Taints)
	}
	found := false
	for _, c := range n.Status.Conditions {
		found = found || (c.Type == corev1.NodeNetworkUnavailable && c.Reason == "RouteCreated")
	}
	if !found {
		t.Fatalf("conditions %v: NetworkUnavailable was dropped", n.Status.Conditions)
	}
}

// The node lifecycle controller sets Ready Unknown when the lease lapses
// (an API server outage longer than its grace period): the node's next
// status period writes Ready again, without waiting for the report
// frequency, with its transition time counted from the Unknown.
func TestStatusWrittenAgainAfterOthersMarkedItUnknown(t *testing.T) {
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var down atomic.Bool
	runNode(t, client, clk, &down)
	ctx := context.Background()
	get := nodeGetter(client)
	eventually(t, "node-1 registered and Ready", func() bool { return readyOf(get()) == corev1.ConditionTrue })
	n := get()
	markedAt := metav1.NewTime(clk.Now())
	for i := range n.Status.Conditions {
		if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
			c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			c.LastTransitionTime = markedAt
		}
	}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	step := stepping(clk)
	eventually(t, "Ready written again", step(func() bool { return readyOf(get()) == corev1.ConditionTrue }))
	if took := clk.Since(markedAt.Time); took > time.Minute {
		t.Fatalf("Ready was written again after %v of node time, not within a status period", took)
	}
	for _, c := range get().Status.Conditions {
		if c.Type == corev1.NodeReady && c.LastTransitionTime.Before(&markedAt) {
			t.Fatalf("Ready's transition time %v is before the Unknown at %v", c.LastTransitionTime, markedAt)
		}
	}
}

// TestNodePressureEvents checks the kubelet's pressure events: each
// condition's when it is first set, then on every change of its status.
func TestNodePressureEvents(t *testing.T) {
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	rec := record.NewFakeRecorder(100)
	var disk atomic.Bool
	system := actor.NewActorSystem()
	t.Cleanup(system.Shutdown)
	system.Root.Spawn(Props(Config{
		NodeName: "node-1", Client: client, Clock: clk, Logger: zaptest.NewLogger(t), Events: rec,
		Health: func(context.Context) RuntimeHealth { return RuntimeHealth{Name: "sim", Version: "1"} },
		Pressure: func() []corev1.NodeCondition {
			if !disk.Load() {
				return nil
			}
			return []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue,
				Reason: "KubeletHasDiskPressure", Message: "actorlet has disk pressure"}}
		},
	}))
	next := func(want string) {
		t.Helper()
		nextEvent(t, rec, want)
	}
	for _, r := range []string{"Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID", "NodeReady"} {
		if r == "Starting" {
			next("Normal Starting Starting kubelet.")
			continue
		}
		next("Normal " + r + " Node node-1 status is now: " + r)
	}
	disk.Store(true)
	step := stepping(clk)
	eventually(t, "DiskPressure True", step(func() bool {
		n := nodeGetter(client)()
		c := condition(&n.Status, corev1.NodeDiskPressure)
		return c != nil && c.Status == corev1.ConditionTrue
	}))
	next("Normal NodeHasDiskPressure Node node-1 status is now: NodeHasDiskPressure")
	disk.Store(false)
	eventually(t, "DiskPressure False", step(func() bool {
		n := nodeGetter(client)()
		c := condition(&n.Status, corev1.NodeDiskPressure)
		return c != nil && c.Status == corev1.ConditionFalse
	}))
	next("Normal NodeHasNoDiskPressure Node node-1 status is now: NodeHasNoDiskPressure")
	select {
	case got := <-rec.Events:
		t.Fatalf("unexpected event %q", got)
	default:
	}
}

// nextEvent fails the test unless rec's next event, within a deadline, is want.
func nextEvent(t *testing.T, rec *record.FakeRecorder, want string) {
	t.Helper()
	select {
	case got := <-rec.Events:
		if got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no event %q", want)
	}
}

// The period's read of the Node, when nothing changed, is served from the
// API server's watch cache (resourceVersion "0"), as the kubelet's: never
// a quorum read per node per period.
func TestPeriodicReadIsFromTheWatchCache(t *testing.T) {
	client := fake.NewClientset()
	var mu sync.Mutex
	var versions []string // the resourceVersion of each Node read by the actor
	client.PrependReactor("get", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		versions = append(versions, a.(k8stesting.GetActionImpl).GetOptions.ResourceVersion)
		return false, nil, nil
	})
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var down atomic.Bool
	runNode(t, client, clk, &down)
	reads := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(versions)
	}
	eventually(t, "two periodic reads of the Node", stepping(clk)(func() bool { return len(reads()) >= 2 }))
	for i, rv := range reads() {
		if rv != "0" {
			t.Errorf("read %d of the Node asked resourceVersion %q, want \"0\" (the watch cache)", i, rv)
		}
	}
}

// nodesFromTracker is a NodeGetter reading the fake client's objects
// directly (not through its reactors, so not counted as API reads); with
// gone set it holds no Node at all.
type nodesFromTracker struct {
	client *fake.Clientset
	gone   bool
	// staleUID, if set, is the UID of the Node the cache holds: another
	// Node of the name than the API server's.
	staleUID types.UID
	reads    atomic.Int32
}

func (g *nodesFromTracker) Get(name string) (*corev1.Node, error) {
	g.reads.Add(1)
	if g.gone {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	obj, err := g.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", name)
	if err != nil {
		return nil, err
	}
	n := obj.(*corev1.Node)
	if g.staleUID != "" {
		n = n.DeepCopy()
		n.UID = g.staleUID
	}
	return n, nil
}

// countNodeCalls counts the client's reads (GET) and creations of Nodes.
func countNodeCalls(client *fake.Clientset) (gets, creates *atomic.Int32) {
	gets, creates = new(atomic.Int32), new(atomic.Int32)
	client.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets.Add(1)
		return false, nil, nil
	})
	client.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates.Add(1)
		return false, nil, nil
	})
	return gets, creates
}

func spawnNode(t *testing.T, cfg Config) {
	t.Helper()
	system := actor.NewActorSystem()
	t.Cleanup(system.Shutdown)
	cfg.NodeName, cfg.Logger = "node-1", zaptest.NewLogger(t)
	cfg.Health = func(context.Context) RuntimeHealth { return RuntimeHealth{Name: "sim", Version: "1"} }
	system.Root.Spawn(Props(cfg))
}

// With Config.Nodes the periodic check reads the cache, not the API server.
func TestPeriodicCheckReadsTheNodeCache(t *testing.T) {
	client := fake.NewClientset()
	gets, creates := countNodeCalls(client)
	nodes := &nodesFromTracker{client: client}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	spawnNode(t, Config{Client: client, Clock: clk, Nodes: nodes})
	eventually(t, "three periodic reads of the cache", stepping(clk)(func() bool { return nodes.reads.Load() >= 3 }))
	if n := gets.Load(); n != 0 {
		t.Errorf("the actor read the Node from the API server %d times; want 0 (the cache holds it)", n)
	}
	if n := creates.Load(); n != 1 {
		t.Errorf("the Node was created %d times, want once", n)
	}
}

// A Node the cache does not hold, or holds with another UID, is read from
// the API server before it counts as gone: the actor does not register it
// again.
func TestNodeMissingFromTheCacheIsReadFromTheServer(t *testing.T) {
	t.Run("not held", func(t *testing.T) { testCacheMiss(t, &nodesFromTracker{gone: true}) })
	t.Run("another UID", func(t *testing.T) { testCacheMiss(t, &nodesFromTracker{staleUID: "an-older-node"}) })
}

func testCacheMiss(t *testing.T, nodes *nodesFromTracker) {
	client := fake.NewClientset()
	gets, creates := countNodeCalls(client)
	nodes.client = client
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	spawnNode(t, Config{Client: client, Clock: clk, Nodes: nodes})
	eventually(t, "two reads from the API server after the cache missed", stepping(clk)(func() bool {
		return nodes.reads.Load() >= 2 && gets.Load() >= 2
	}))
	if n := creates.Load(); n != 1 {
		t.Errorf("the Node was created %d times, want once: a miss of the cache is not a deletion", n)
	}
}
