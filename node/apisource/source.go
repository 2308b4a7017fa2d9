package apisource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Annotations the kubelet puts on pods (k8s.io/kubernetes/pkg/kubelet/types).
const (
	AnnotationConfigSource = "kubernetes.io/config.source"
	AnnotationConfigMirror = "kubernetes.io/config.mirror"
	// SourceName is the name of this source and its config.source value.
	SourceName = "api"
)

// DefaultSettle is how long a burst of changes is gathered into one set.
const DefaultSettle = 10 * time.Millisecond

// ErrAlreadyRunning is returned by Run when another Run has not returned.
var ErrAlreadyRunning = errors.New("apisource: source is already running")

// Options configure a Source.
type Options struct {
	// Client is the node's API client. Required.
	Client kubernetes.Interface
	// NodeName selects the pods (spec.nodeName). Required.
	NodeName string
	// ResyncPeriod is the informer's resync (0: none; sets are delivered on
	// changes only).
	ResyncPeriod time.Duration
	// Settle is how long a burst of changes is gathered (0: DefaultSettle).
	Settle time.Duration
	// OnMirror, when set, is called with each mirror pod the informer adds,
	// changes or deletes (the mirror pod keeper re-checks it), from the
	// informer's goroutine; it must not block.
	OnMirror func(*corev1.Pod)
	Logger   *zap.Logger
}

// Source is the API server's pods for one node. See the package
// documentation for what it guarantees.
type Source struct {
	opts    Options
	feed    feed
	running atomic.Bool
	// handed is the copy last handed on of each pod in the cache, by
	// UID, with the cached version it was made from; Run's goroutine only.
	handed map[types.UID]handedPod
}

// handedPod is a copy handed on and the resourceVersion of the cached
// version it stands for. It does not keep the cached object: a pod's
// status changes after its copy is handed on (the node's own writes), and
// a kept object would hold an old version, status and all, for as long as
// the pod's desired part stays the same.
type handedPod struct {
	version string
	out     *corev1.Pod
}

// feed is where a Source reads its node's pods: an informer of its own
// (New) or one shared by many nodes (Shared.Source).
type feed interface {
	// watch calls onChange with each of the node's pods added, changed or
	// deleted (old is the pod before a change, else nil) until stop;
	// synced reports once the pods of the first listing went by. ctx ends
	// what watch started.
	watch(ctx context.Context, node string, onChange func(old, obj any)) (synced func() bool, stop func(), err error)
	// pods lists the node's pods, mirror pods included.
	pods(node string) ([]*corev1.Pod, error)
	lister() corelisters.PodLister
}

// New returns a Source with an informer of its own (pods with
// spec.nodeName=<node>); nothing talks to the API server before Run.
func New(opts Options) (*Source, error) {
	if opts.Client == nil || opts.NodeName == "" {
		return nil, fmt.Errorf("apisource: a client and a node name are required")
	}
	selector := fields.OneTermEqualSelector("spec.nodeName", opts.NodeName).String()
	t := &cacheTransform{share: newPodSharer()}
	f := informers.NewSharedInformerFactoryWithOptions(opts.Client, opts.ResyncPeriod,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }),
		informers.WithTransform(t.transform))
	pods := f.Core().V1().Pods()
	inf := pods.Informer()
	t.store = inf.GetStore()
	return newSource(opts, &ownFeed{factory: f, informer: inf, podLister: pods.Lister()}), nil
}

func newSource(opts Options, f feed) *Source {
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Source{opts: opts, feed: f}
}

// Lister reads the informer's cache: every pod bound to the node, mirror
// pods included, as the API server last showed them (from a Shared
// informer, every pod bound to any node), without their managed fields
// and with the config source annotation (kubernetes.io/config.source: api)
// on all but the mirror pods (see cacheTransform). Shared, read only.
func (s *Source) Lister() corelisters.PodLister { return s.feed.lister() }

// ownFeed is a Source's own informer, started and stopped by its Run.
type ownFeed struct {
	factory   informers.SharedInformerFactory
	informer  cache.SharedIndexInformer
	podLister corelisters.PodLister
}

func (f *ownFeed) watch(ctx context.Context, _ string, onChange func(old, obj any)) (func() bool, func(), error) {
	reg, err := f.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onChange(nil, obj) },
		UpdateFunc: onChange,
		DeleteFunc: func(obj any) { onChange(nil, obj) },
	})
	if err != nil {
		return nil, nil, err
	}
	f.factory.Start(ctx.Done())
	return reg.HasSynced, func() {
		_ = f.informer.RemoveEventHandler(reg)
		f.factory.Shutdown()
	}, nil
}

func (f *ownFeed) pods(string) ([]*corev1.Pod, error) { return f.podLister.List(labels.Everything()) }

func (f *ownFeed) lister() corelisters.PodLister { return f.podLister }

// Run watches the API server and calls sink with the whole set of the
// node's pods: first once the informer has synced, then after each burst
// of changes. sink is called from Run's goroutine only. Run returns when
// ctx is done.
func (s *Source) Run(ctx context.Context, sink func([]*corev1.Pod)) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer s.running.Store(false)
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	onChange := func(old, obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		// A change of the status alone (the node's own writes, mostly)
		// leaves the set as it was: the node is not told.
		if o, ok := old.(*corev1.Pod); !ok || !sameDesired(o, obj) {
			poke()
		}
		if p, ok := obj.(*corev1.Pod); ok && IsMirror(p) && s.opts.OnMirror != nil {
			s.opts.OnMirror(p)
		}
	}
	synced, stop, err := s.feed.watch(ctx, s.opts.NodeName, onChange)
	if err != nil {
		return fmt.Errorf("apisource: %w", err)
	}
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return ctx.Err()
	}
	s.opts.Logger.Info("pods from the API server synced")
	var last []*corev1.Pod
	deliver := func() {
		set := s.set()
		if slices.Equal(set, last) { // an unchanged pod is handed on as the same copy (set)
			return
		}
		last = set
		sink(set)
	}
	// Drain the pokes of the initial listing: the first set holds them all.
	select {
	case <-changed:
	default:
	}
	deliver()
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			timer.Reset(s.opts.Settle)
		case <-timer.C:
			deliver()
		}
	}
}

// set is the node's non-mirror pods from the cache, as copies for the
// Supervisor, oldest first. A pod whose desired part did not change since
// its last copy was made is handed on as that same copy.
func (s *Source) set() []*corev1.Pod {
	all, err := s.feed.pods(s.opts.NodeName)
	if err != nil {
		s.opts.Logger.Error("list the informer's pods", zap.Error(err)) // a cache lister does not fail
		return nil
	}
	out := make([]*corev1.Pod, 0, len(all))
	handed := make(map[types.UID]handedPod, len(all))
	for _, p := range all {
		if IsMirror(p) {
			continue
		}
		h, ok := s.handed[p.UID]
		switch {
		case !ok || (h.version != p.ResourceVersion && !handedAs(h.out, p)):
			h = handedPod{version: p.ResourceVersion, out: desired(p)}
		case h.version != p.ResourceVersion:
			// A new version with the same desired part (a status write):
			// the copy handed on stays, sharing its values with the new
			// version (see cacheTransform).
			h.version = p.ResourceVersion
		}
		handed[p.UID] = h
		out = append(out, h.out)
	}
	s.handed = handed
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.UID, b.UID)
	})
	return out
}

// IsMirror reports whether pod is a mirror pod (the API's copy of a static pod).
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[AnnotationConfigMirror]
	return ok
}

// desired is the part of an API pod the node acts on: a copy without the
// status, resourceVersion and managed fields, annotated with the config
// source. It shares the cached pod's spec and metadata values, its
// annotations too when the cache's transform annotated the pod already
// (else they are copied), and so is read only, as the cache is.
func desired(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	out.ResourceVersion = ""
	out.ManagedFields = nil
	if p.Annotations[AnnotationConfigSource] != SourceName {
		out.Annotations = make(map[string]string, len(p.Annotations)+1)
		maps.Copy(out.Annotations, p.Annotations)
		out.Annotations[AnnotationConfigSource] = SourceName
	}
	return out
}

// handedAs reports whether desired(p) would be the same as out, a copy
// desired made of an earlier version of the pod.
func handedAs(out, p *corev1.Pod) bool {
	if out.UID != p.UID || len(out.Annotations) != len(p.Annotations)+1-count(p.Annotations, AnnotationConfigSource) {
		return false
	}
	for k, v := range p.Annotations {
		if k == AnnotationConfigSource {
			continue
		}
		if ov, ok := out.Annotations[k]; !ok || ov != v {
			return false
		}
	}
	a, b := out.ObjectMeta, p.ObjectMeta
	a.Annotations, b.Annotations = nil, nil
	b.ResourceVersion, b.ManagedFields = "", nil
	return apiequality.Semantic.DeepEqual(a, b) && apiequality.Semantic.DeepEqual(out.Spec, p.Spec)
}

// count is 1 if m has key k, else 0.
func count(m map[string]string, k string) int {
	if _, ok := m[k]; ok {
		return 1
	}
	return 0
}

// sameDesired reports whether the pod obj is, as desired() hands it on,
// the same as old: only its status, resourceVersion or managed fields
// changed.
func sameDesired(old *corev1.Pod, obj any) bool {
	p, ok := obj.(*corev1.Pod)
	if !ok || old.UID != p.UID {
		return false
	}
	a, b := old.ObjectMeta, p.ObjectMeta
	a.ResourceVersion, a.ManagedFields = "", nil
	b.ResourceVersion, b.ManagedFields = "", nil
	return apiequality.Semantic.DeepEqual(a, b) && apiequality.Semantic.DeepEqual(old.Spec, p.Spec)
}
