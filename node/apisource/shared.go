package apisource

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeNameIndex indexes a Shared informer's pods by spec.nodeName.
const nodeNameIndex = "spec.nodeName"

// Shared is one informer of every pod bound to a node (spec.nodeName set)
// for many nodes in one process: one list and one watch instead of one
// per node. Its one event handler hands each change to the Source of the
// pod's node (Shared.Source), which reads its whole set from the index by
// node name; a Source behaves as one from New, with the guarantees of the
// package documentation.
//
// A node's own identity may list and watch only its own pods (the Node
// authorizer's field selector rule), so the client of a Shared is one that
// may read every pod: the process's own, not a node's.
type Shared struct {
	factory   informers.SharedInformerFactory
	informer  cache.SharedIndexInformer
	podLister corelisters.PodLister
	reg       cache.ResourceEventHandlerRegistration

	mu    sync.RWMutex
	nodes map[string]func(old, obj any)
}

// NewShared returns a Shared reading with client; nothing talks to the API
// server before Start.
func NewShared(client kubernetes.Interface, resync time.Duration) (*Shared, error) {
	if client == nil {
		return nil, fmt.Errorf("apisource: a client is required")
	}
	selector := fields.OneTermNotEqualSelector("spec.nodeName", "").String()
	t := &cacheTransform{share: newPodSharer()}
	f := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }),
		informers.WithTransform(t.transform))
	pods := f.Core().V1().Pods()
	inf := pods.Informer()
	t.store = inf.GetStore()
	if err := inf.AddIndexers(cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil
		}
		return []string{p.Spec.NodeName}, nil
	}}); err != nil {
		return nil, fmt.Errorf("apisource: %w", err)
	}
	s := &Shared{factory: f, informer: inf, podLister: pods.Lister(), nodes: map[string]func(any, any){}}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.dispatch(nil, obj) },
		UpdateFunc: s.dispatch,
		DeleteFunc: func(obj any) { s.dispatch(nil, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("apisource: %w", err)
	}
	s.reg = reg
	return s, nil
}

// Start lists and watches until ctx ends; Shutdown then waits for the
// informer to stop.
func (s *Shared) Start(ctx context.Context) { s.factory.Start(ctx.Done()) }

// Shutdown waits for the informer started by Start to stop (its ctx must
// be done).
func (s *Shared) Shutdown() { s.factory.Shutdown() }

// HasSynced reports whether the first listing has been dispatched.
func (s *Shared) HasSynced() bool { return s.reg.HasSynced() }

// Lister reads the cache: every pod bound to any node. Shared, read only.
func (s *Shared) Lister() corelisters.PodLister { return s.podLister }

// Source returns the Source of the node opts.NodeName over the shared
// informer (opts.Client and ResyncPeriod are not used). Its Run does not
// start the informer: Start does, once for all nodes.
func (s *Shared) Source(opts Options) (*Source, error) {
	if opts.NodeName == "" {
		return nil, fmt.Errorf("apisource: a node name is required")
	}
	return newSource(opts, (*sharedFeed)(s)), nil
}

// Count is the number of pods bound to node in the cache.
func (s *Shared) Count(node string) int {
	objs, err := s.informer.GetIndexer().ByIndex(nodeNameIndex, node)
	if err != nil {
		return 0
	}
	return len(objs)
}

// dispatch hands a change to the Source of the pod's node, if it runs.
func (s *Shared) dispatch(old, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		if t, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
			p, ok = t.Obj.(*corev1.Pod)
		}
		if !ok {
			return
		}
	}
	s.mu.RLock()
	h := s.nodes[p.Spec.NodeName]
	s.mu.RUnlock()
	if h != nil {
		h(old, obj)
	}
}

// sharedFeed is the feed of a Source over a Shared.
type sharedFeed Shared

func (f *sharedFeed) watch(_ context.Context, node string, onChange func(old, obj any)) (func() bool, func(), error) {
	s := (*Shared)(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.nodes[node]; taken {
		return nil, nil, fmt.Errorf("node %q already has a running source on this informer", node)
	}
	s.nodes[node] = onChange
	return s.reg.HasSynced, func() {
		s.mu.Lock()
		delete(s.nodes, node)
		s.mu.Unlock()
	}, nil
}

func (f *sharedFeed) pods(node string) ([]*corev1.Pod, error) {
	objs, err := f.informer.GetIndexer().ByIndex(nodeNameIndex, node)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *sharedFeed) lister() corelisters.PodLister { return f.podLister }
