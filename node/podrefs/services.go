package podrefs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/actorlet/actorlet/podspec"
)

// Services is a podspec.ServiceLister over a client-go informer of the
// cluster's Services with a cluster IP (headless ones are not watched, as
// the kubelet does not: they have no variables). It is safe for concurrent
// use; it answers podspec.ErrServicesNotSynced until Start's first list
// has been read.
type Services struct {
	factory informers.SharedInformerFactory
	lister  corelisters.ServiceLister
	synced  func() bool
}

var _ podspec.ServiceLister = (*Services)(nil)

// NewServices returns a Services reading with client. It does no I/O
// until Start.
func NewServices(client kubernetes.Interface) *Services {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone).String()
	}))
	inf := f.Core().V1().Services()
	return &Services{factory: f, lister: inf.Lister(), synced: inf.Informer().HasSynced}
}

// Start lists and watches the Services until ctx ends; Shutdown then waits
// for the informer to stop.
func (s *Services) Start(ctx context.Context) { s.factory.Start(ctx.Done()) }

// Shutdown waits for the informer started by Start to stop (its ctx must
// be done).
func (s *Services) Shutdown() { s.factory.Shutdown() }

// Services implements podspec.ServiceLister from the informer's cache.
func (s *Services) Services(context.Context) ([]*corev1.Service, error) {
	if !s.synced() {
		return nil, podspec.ErrServicesNotSynced
	}
	return s.lister.List(labels.Everything())
}
