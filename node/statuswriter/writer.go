package statuswriter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
)

// Pod annotations (k8s.io/kubernetes/pkg/kubelet/types).
const (
	annotationSource = "kubernetes.io/config.source"
	annotationHash   = "kubernetes.io/config.hash"
	annotationMirror = "kubernetes.io/config.mirror"
	sourceAPI        = "api"
	sourceFile       = "file"
)

// Options configure a Writer.
type Options struct {
	// Client is the node's API client. Required.
	Client kubernetes.Interface
	// Pods is a cache of the pods bound to the node, mirror pods included
	// (apisource.Source.Lister). Required.
	Pods corelisters.PodLister
	// NodeName owns the mirror pods. Required.
	NodeName string
	// RetryMin and RetryMax bound the per-pod back-off of failed writes
	// (defaults 200ms and 30s).
	RetryMin, RetryMax time.Duration
	// ResyncPeriod re-checks every pod: mirror pods present, statuses
	// written (default 10s, the kubelet's syncPeriod for statuses).
	ResyncPeriod time.Duration
	// Workers write in parallel (default 4).
	Workers int
	// Now is the clock of the conditions' transition times (default
	// time.Now).
	Now    func() time.Time
	Logger *zap.Logger
}

// Writer writes pod statuses and mirror pods. It implements
// actors.StatusSink. See the package documentation for its guarantees.
type Writer struct {
	opts  Options
	log   *zap.Logger
	queue workqueue.TypedRateLimitingInterface[string]

	mu   sync.Mutex
	pods map[string]*entry // by the PodActor's UID

	nodeMu  sync.Mutex
	nodeUID types.UID
}

// entry is the latest word of a PodActor on its pod, and what the Writer
// last knew of the API object.
type entry struct {
	seq uint64
	pod *corev1.Pod // as accepted; shared, never changed
	// statusView builds the status when it is written, when the update
	// had a view: a few words shared with the PodActor's state instead of
	// a status kept for every pod of the node (about 1.1 KB each); else
	// status is the update's, shared with the other status sinks, never
	// changed (merge copies it).
	statusView lifecycle.StatusView
	status     *corev1.PodStatus
	removed    bool
	// written is the seq last written (or found already on the server).
	written uint64
	// server is the API object as the last write returned it, as much of
	// it as the next write reads (see kept), or the cache's object once the
	// cache holds that version (nil: read it from the cache or the API
	// first).
	server *corev1.Pod
}

var _ actors.StatusSink = (*Writer)(nil)

// New returns a Writer; it writes nothing before Run.
func New(opts Options) (*Writer, error) {
	if opts.Client == nil || opts.Pods == nil || opts.NodeName == "" {
		return nil, errors.New("statuswriter: a client, a pod cache and a node name are required")
	}
	if opts.RetryMin == 0 {
		opts.RetryMin = 200 * time.Millisecond
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ResyncPeriod == 0 {
		opts.ResyncPeriod = 10 * time.Second
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Writer{
		opts: opts, log: opts.Logger, pods: map[string]*entry{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.RetryMin, opts.RetryMax),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pod-status"}),
	}, nil
}

// PodStatus implements actors.StatusSink: it keeps the newest status of
// API and static pods and queues the pod. It never blocks.
func (w *Writer) PodStatus(u actors.PodUpdate) {
	w.mu.Lock()
	e := w.pods[u.UID]
	switch {
	case e != nil && u.Seq <= e.seq:
		w.mu.Unlock()
		return
	case e == nil && (u.Pod == nil || !ours(u.Pod)):
		w.mu.Unlock()
		return
	case e == nil:
		e = &entry{}
		w.pods[u.UID] = e
	}
	e.seq, e.removed = u.Seq, u.Removed
	if u.Pod != nil {
		e.pod = u.Pod
	}
	switch {
	case u.View.Valid():
		e.statusView, e.status = u.View, nil
	case u.Status != nil:
		e.statusView, e.status = lifecycle.StatusView{}, u.Status // read only: see actors.StatusSinks
	}
	w.mu.Unlock()
	w.queue.Add(u.UID)
}

// ours: pods the API server knows (API pods) or should (static pods).
func ours(pod *corev1.Pod) bool {
	src := pod.Annotations[annotationSource]
	return src == sourceAPI || src == sourceFile
}

// Run writes until ctx is done.
func (w *Writer) Run(ctx context.Context) {
	defer w.queue.ShutDown()
	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.next(ctx) {
			}
		}()
	}
	// The resync on Run's own goroutine (thousands of a fleet's nodes
	// each had one more for it).
	wait.UntilWithContext(ctx, func(context.Context) { w.resync() }, w.opts.ResyncPeriod)
	w.queue.ShutDown()
	wg.Wait()
}

// resync queues every pod, to be checked.
func (w *Writer) resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid := range w.pods {
		w.queue.Add(uid)
	}
}

func (w *Writer) next(ctx context.Context) bool {
	uid, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(uid)
	if err := w.sync(ctx, uid); err != nil {
		if ctx.Err() == nil {
			w.log.Info("pod status write failed, will retry", zap.String("pod", uid), zap.Error(err))
		}
		w.queue.AddRateLimited(uid)
		return true
	}
	w.queue.Forget(uid)
	return true
}

// view is a consistent copy of an entry for one sync.
type view struct {
	uid        string
	seq        uint64
	pod        *corev1.Pod
	statusView lifecycle.StatusView
	status     *corev1.PodStatus
	removed    bool
	written    uint64
	server     *corev1.Pod
}

func (w *Writer) view(uid string) (view, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.pods[uid]
	if e == nil || e.pod == nil {
		return view{}, false
	}
	return view{uid: uid, seq: e.seq, pod: e.pod, statusView: e.statusView, status: e.status, removed: e.removed, written: e.written, server: e.server}, true
}

// podStatus is the status to write: the update's, or built from its view
// (nil: none).
func (v view) podStatus() *corev1.PodStatus {
	if v.statusView.Valid() {
		st := v.statusView.Status()
		return &st
	}
	return v.status
}

// wrote records a write of seq (or that the server already had it) and
// the object the server returned.
func (w *Writer) wrote(uid string, seq uint64, server *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.pods[uid]; e != nil {
		e.written, e.server = max(e.written, seq), server
	}
}

// forget drops a pod whose API object is done with, unless a newer update
// arrived meanwhile.
func (w *Writer) forget(uid string, seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.pods[uid]; e != nil && e.seq == seq {
		delete(w.pods, uid)
	}
}

// stale drops what the Writer knew of the API object (after a conflict).
func (w *Writer) stale(uid string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.pods[uid]; e != nil {
		e.server = nil
	}
}

func (w *Writer) sync(ctx context.Context, uid string) error {
	v, ok := w.view(uid)
	if !ok {
		return nil
	}
	if v.pod.Annotations[annotationSource] == sourceFile {
		return w.syncMirror(ctx, v)
	}
	if v.removed {
		return w.deletePod(ctx, v, v.pod.Namespace, v.pod.Name, v.pod.UID)
	}
	if v.written >= v.seq && v.server != nil {
		cached, err := w.opts.Pods.Pods(v.pod.Namespace).Get(v.pod.Name)
		if err != nil {
			return nil
		}
		if !changedSince(v.server, cached) {
			w.caughtUp(uid, v.server, cached)
			return nil
		}
		// Someone else wrote the object since (the node lifecycle
		// controller marks pods not Ready when the node's lease lapses):
		// check that the PodActor's word still holds, and write it again
		// if not.
		v.server = cached
	}
	return w.writeStatus(ctx, v, v.pod.UID)
}

// changedSince: the cached object is the one last written (same UID) but
// another version of it. A cache lagging behind the last write can make
// this true too; the write that follows is then a no-op or a repeat.
func changedSince(written, cached *corev1.Pod) bool {
	return cached != nil && written != nil && cached.UID == written.UID && cached.ResourceVersion != written.ResourceVersion
}

// deletePod deletes the API object of a removed pod: grace 0, UID
// precondition. Gone already, or a new pod with the name: nothing to do.
func (w *Writer) deletePod(ctx context.Context, v view, ns, name string, uid types.UID) error {
	grace := int64(0)
	err := w.opts.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s: %w", ns, name, err)
	}
	if err == nil {
		w.log.Info("deleted pod from the API server", zap.String("pod", ns+"/"+name), zap.String("uid", string(uid)))
	}
	w.forget(v.uid, v.seq)
	return nil
}

// current is the API object the status is merged into: the last write's
// answer, else the cache, else a GET. Nil when the object is gone.
func (w *Writer) current(ctx context.Context, v view, uid types.UID) (*corev1.Pod, error) {
	if v.server != nil && v.server.UID == uid {
		return v.server, nil
	}
	if p, err := w.opts.Pods.Pods(v.pod.Namespace).Get(v.pod.Name); err == nil && p.UID == uid {
		return p, nil
	}
	p, err := w.opts.Client.CoreV1().Pods(v.pod.Namespace).Get(ctx, v.pod.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && p.UID != uid) {
		return nil, nil
	}
	return p, err
}

// writeStatus patches the status of the API object with UID uid (the pod
// itself, or a static pod's mirror).
func (w *Writer) writeStatus(ctx context.Context, v view, uid types.UID) error {
	status := v.podStatus()
	if status == nil {
		return nil
	}
	cur, err := w.current(ctx, v, uid)
	if err != nil {
		return fmt.Errorf("read pod %s/%s: %w", v.pod.Namespace, v.pod.Name, err)
	}
	if cur == nil {
		// Gone from the API: its deletion reaches the node through the
		// source; nothing to write to.
		w.wrote(v.uid, v.seq, nil)
		return nil
	}
	next := merge(&cur.Status, status, cur.Spec.ReadinessGates, metav1.NewTime(w.opts.Now()))
	patch, err := statusPatch(uid, &cur.Status, next)
	if err != nil {
		return err
	}
	if patch == nil {
		w.wrote(v.uid, v.seq, cur)
		return nil
	}
	got, err := w.opts.Client.CoreV1().Pods(cur.Namespace).Patch(ctx, cur.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		w.stale(v.uid)
		return fmt.Errorf("patch status of pod %s/%s: %w", cur.Namespace, cur.Name, err)
	case err != nil:
		return fmt.Errorf("patch status of pod %s/%s: %w", cur.Namespace, cur.Name, err)
	}
	w.wrote(v.uid, v.seq, kept(got))
	return nil
}

// kept is what the Writer keeps of the object a status write returned:
// what the next write and the change check read (name, namespace, UID,
// resourceVersion, readiness gates, status). Not the spec, the rest of the
// metadata or the managed fields, which are most of a pod object's memory,
// held for every pod of the node. The response is the Writer's own, so
// nothing is copied.
func kept(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion},
		Spec:       corev1.PodSpec{ReadinessGates: p.Spec.ReadinessGates},
		Status:     p.Status,
	}
}

// caughtUp keeps the cache's object instead of what the last write
// returned, once the cache holds that version (same UID and
// resourceVersion): the cache holds it anyway.
func (w *Writer) caughtUp(uid string, server, cached *corev1.Pod) {
	if cached == nil || cached == server || cached.UID != server.UID || cached.ResourceVersion != server.ResourceVersion {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.pods[uid]; e != nil && e.server == server {
		e.server = cached
	}
}
