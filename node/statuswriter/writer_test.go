package statuswriter_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/statuswriter"
)

type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	indexer cache.Indexer
	w       *statuswriter.Writer
	cancel  context.CancelFunc
	done    chan struct{}
}

func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	return newFixtureResync(t, time.Hour, objs...)
}

func newFixtureResync(t *testing.T, resync time.Duration, objs ...runtime.Object) *fixture {
	t.Helper()
	client := fake.NewClientset(objs...)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			if err := indexer.Add(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	w, err := statuswriter.New(statuswriter.Options{Client: client, Pods: corelisters.NewPodLister(indexer), NodeName: "node-1",
		RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond, ResyncPeriod: resync})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, client: client, indexer: indexer, w: w}
}

// run starts the writer; it is stopped at the end of the test.
func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan struct{})
	go func() { defer close(f.done); f.w.Run(ctx) }()
	f.t.Cleanup(func() { cancel(); <-f.done })
}

func (f *fixture) pod(name string) *corev1.Pod {
	p, err := f.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return &corev1.Pod{}
	}
	return p
}

// actions returns the client's actions of a verb on pods.
func (f *fixture) actions(verb string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == "pods" {
			out = append(out, a)
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

func apiPod(name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: ktypes.UID(uid),
		Annotations: map[string]string{"kubernetes.io/config.source": "api"}}, Spec: corev1.PodSpec{NodeName: "node-1"}}
}

func status(phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.PodStatus {
	return &corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: ready},
	}}
}

func TestWriterPatchesStatusKeepingOthersConditions(t *testing.T) {
	onServer := apiPod("web", "uid-1")
	onServer.Annotations = nil // the API object has no config.source; the accepted pod has
	onServer.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "", Message: "by the scheduler", LastTransitionTime: metav1.Now()},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"},
	}
	f := newFixture(t, onServer)
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: apiPod("web", "uid-1"), Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 5})
	f.run()
	eventually(t, "web Running", func() bool { return f.pod("web").Status.Phase == corev1.PodRunning })
	got := f.pod("web").Status
	var conds []string
	for _, c := range got.Conditions {
		conds = append(conds, string(c.Type)+"="+string(c.Status))
		if c.Type == corev1.PodScheduled && c.Message != "by the scheduler" {
			t.Errorf("the scheduler's PodScheduled condition was replaced: %+v", c)
		}
	}
	if strings.Join(conds, ",") != "PodScheduled=True,Ready=True,DisruptionTarget=True" {
		t.Fatalf("conditions %v", conds)
	}
	patches := f.actions("patch")
	if len(patches) != 1 {
		t.Fatalf("%d patches, want 1", len(patches))
	}
	p := patches[0].(k8stesting.PatchAction)
	if p.GetSubresource() != "status" || !strings.Contains(string(p.GetPatch()), `"uid":"uid-1"`) {
		t.Fatalf("patch %s of %q: want the status subresource with the UID as precondition", p.GetPatch(), p.GetSubresource())
	}
}

func TestWriterVersionsOnlyGoUpAndBurstsCoalesce(t *testing.T) {
	f := newFixture(t, apiPod("web", "uid-1"))
	pod := apiPod("web", "uid-1")
	for seq := uint64(1); seq <= 50; seq++ {
		f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: pod, Status: status(corev1.PodPending, corev1.ConditionFalse), Seq: seq})
	}
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: pod, Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 60})
	// Late and older: ignored.
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: pod, Status: status(corev1.PodPending, corev1.ConditionFalse), Seq: 55})
	f.run()
	eventually(t, "web Running", func() bool { return f.pod("web").Status.Phase == corev1.PodRunning })
	if n := len(f.actions("patch")); n != 1 {
		t.Fatalf("%d patches for a burst of 52 updates, want 1", n)
	}
	// The same status again: nothing to write.
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: pod, Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 61})
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: pod, Status: status(corev1.PodSucceeded, corev1.ConditionFalse), Seq: 62})
	eventually(t, "web Succeeded", func() bool { return f.pod("web").Status.Phase == corev1.PodSucceeded })
	if n := len(f.actions("patch")); n != 2 {
		t.Fatalf("%d patches, want 2", n)
	}
}

func TestWriterRetriesFailedWrites(t *testing.T) {
	f := newFixture(t, apiPod("web", "uid-1"))
	var failures atomic.Int32
	f.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failures.Add(1) <= 3 {
			return true, nil, apierrors.NewServiceUnavailable("API server away")
		}
		return false, nil, nil
	})
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: apiPod("web", "uid-1"), Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 1})
	f.run()
	eventually(t, "web Running", func() bool { return f.pod("web").Status.Phase == corev1.PodRunning })
	if n := failures.Load(); n != 4 {
		t.Fatalf("%d patch attempts, want 3 failed and 1 good", n)
	}
}

func TestWriterDeletesRemovedPodsWithUIDPrecondition(t *testing.T) {
	f := newFixture(t, apiPod("web", "uid-1"))
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: apiPod("web", "uid-1"), Status: status(corev1.PodFailed, corev1.ConditionFalse), Seq: 9, Removed: true})
	f.run()
	eventually(t, "web deleted", func() bool {
		_, err := f.client.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	del := f.actions("delete")[0].(k8stesting.DeleteAction).GetDeleteOptions()
	if del.GracePeriodSeconds == nil || *del.GracePeriodSeconds != 0 || del.Preconditions == nil || *del.Preconditions.UID != "uid-1" {
		t.Fatalf("delete options %+v", del)
	}
}

func TestWriterIgnoresPodsWithoutAnAPIObject(t *testing.T) {
	f := newFixture(t)
	pod := apiPod("embedded", "uid-9")
	pod.Annotations = nil // an embedded source's pod
	f.w.PodStatus(actors.PodUpdate{UID: "uid-9", Pod: pod, Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 1})
	f.w.PodStatus(actors.PodUpdate{UID: "uid-0", Seq: 1}) // an orphan
	f.run()
	f.cancel()
	<-f.done
	if a := f.client.Actions(); len(a) != 0 {
		t.Fatalf("actions for pods the API server does not know: %v", a)
	}
}

func TestWriterKeepsMirrorPods(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
	f := newFixture(t, node)
	// The fake API server gives created objects no UID: give them one.
	var n atomic.Int32
	f.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		p.UID = ktypes.UID("mirror-" + string(rune('0'+n.Add(1))))
		return false, nil, nil
	})
	static := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-node-1", Namespace: "kube-system", UID: "hash-1",
		Annotations: map[string]string{"kubernetes.io/config.source": "file", "kubernetes.io/config.hash": "hash-1"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "etcd", Image: "etcd"}}}}
	f.w.PodStatus(actors.PodUpdate{UID: "hash-1", Pod: static, Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 3})
	f.run()
	get := func() *corev1.Pod {
		p, err := f.client.CoreV1().Pods("kube-system").Get(context.Background(), "etcd-node-1", metav1.GetOptions{})
		if err != nil {
			return &corev1.Pod{}
		}
		return p
	}
	eventually(t, "the mirror pod Running", func() bool { return get().Status.Phase == corev1.PodRunning })
	m := get()
	if m.Annotations["kubernetes.io/config.mirror"] != "hash-1" || len(m.OwnerReferences) != 1 ||
		m.OwnerReferences[0].UID != "node-uid" || m.OwnerReferences[0].Kind != "Node" || m.UID == "hash-1" {
		t.Fatalf("mirror pod %+v", m.ObjectMeta)
	}
	// Deleted by someone: re-created when the informer says so.
	if err := f.client.CoreV1().Pods("kube-system").Delete(context.Background(), m.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.w.MirrorChanged(m)
	eventually(t, "the mirror pod re-created", func() bool { return get().UID != "" && get().UID != m.UID })
	// The static pod removed: its mirror goes.
	if err := f.indexer.Add(get()); err != nil {
		t.Fatal(err)
	}
	f.w.PodStatus(actors.PodUpdate{UID: "hash-1", Pod: static, Status: status(corev1.PodSucceeded, corev1.ConditionFalse), Seq: 9, Removed: true})
	eventually(t, "the mirror pod deleted", func() bool { return get().UID == "" })
}

// The node lifecycle controller marks a node's pods not Ready when its
// lease lapses (an API server outage); the next resync writes the
// PodActor's status again.
func TestWriterRewritesAStatusSomeoneElseChanged(t *testing.T) {
	f := newFixtureResync(t, time.Millisecond, apiPod("web", "uid-1"))
	f.w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: apiPod("web", "uid-1"), Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 1})
	f.run()
	ready := func() corev1.ConditionStatus {
		for _, c := range f.pod("web").Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status
			}
		}
		return ""
	}
	eventually(t, "web Ready", func() bool { return ready() == corev1.ConditionTrue })
	patches := len(f.actions("patch"))

	byController := f.pod("web")
	byController.ResourceVersion = "controller-1"
	byController.Status.Conditions = status(corev1.PodRunning, corev1.ConditionFalse).Conditions
	if _, err := f.client.CoreV1().Pods("default").UpdateStatus(context.Background(), byController, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.indexer.Update(byController); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web Ready again", func() bool { return ready() == corev1.ConditionTrue })
	if got := len(f.actions("patch")); got != patches+1 {
		t.Fatalf("%d patches after the controller's write, want 1", got-patches)
	}
}

// A mirror pod the API server has but the cache does not show yet (the
// informer backs off after an outage, while a create went through): the
// writer takes it and writes its status, instead of failing every round on
// AlreadyExists until the cache catches up. A pod of the name that is not
// this static pod's mirror is left alone.
func TestWriterTakesAMirrorTheCacheLags(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
	existing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-node-1", Namespace: "kube-system", UID: "mirror-1",
		Annotations: map[string]string{"kubernetes.io/config.mirror": "hash-1"}}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-node-1", Namespace: "kube-system", UID: "api-1",
		Annotations: map[string]string{"kubernetes.io/config.mirror": "hash-old"}}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	f := newFixture(t, node)
	for _, p := range []*corev1.Pod{existing, other} { // in the API, not in the cache
		if _, err := f.client.CoreV1().Pods("kube-system").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	static := func(name, hash string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: ktypes.UID(hash),
			Annotations: map[string]string{"kubernetes.io/config.source": "file", "kubernetes.io/config.hash": hash}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	f.w.PodStatus(actors.PodUpdate{UID: "hash-1", Pod: static("etcd-node-1", "hash-1"), Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 1})
	f.w.PodStatus(actors.PodUpdate{UID: "hash-2", Pod: static("other-node-1", "hash-2"), Status: status(corev1.PodRunning, corev1.ConditionTrue), Seq: 1})
	f.run()
	get := func(name string) *corev1.Pod {
		p, err := f.client.CoreV1().Pods("kube-system").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	eventually(t, "the existing mirror's status written", func() bool { return get("etcd-node-1").Status.Phase == corev1.PodRunning })
	if p := get("etcd-node-1"); p.UID != "mirror-1" {
		t.Fatalf("mirror pod UID %s, want the existing mirror-1", p.UID)
	}
	if p := get("other-node-1"); p.Status.Phase != "" || p.UID != "api-1" {
		t.Fatalf("a pod of another hash was written to: %s %s", p.UID, p.Status.Phase)
	}
}
