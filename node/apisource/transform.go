package apisource

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// cacheTransform is the pod informers' transform. Guarantees:
//
//   - A pod is kept in the cache without its managedFields, which nothing
//     on a node reads (the status writer patches the status, the mirror
//     pods' comparisons clear them) and which are a sixth of a pod
//     object's memory in a fleet's shared cache.
//
//   - A pod other than a mirror pod is kept with the annotation
//     kubernetes.io/config.source: api, as desired() hands it on (the
//     kubelet's pods from the API server carry it), so that the copies
//     handed on share the cached pod's annotations instead of holding a
//     copy of them each. Nothing on the node writes a pod's annotations
//     back: the status writer patches the status only.
//
//   - A new version of a cached pod (same UID) whose spec, labels,
//     annotations, owner references or finalizers are equal to the cached
//     version's (apiequality.Semantic, as sameDesired judges them) takes
//     the cached version's values for them, sharing their memory. Most new
//     versions of a pod on a node change only its status (the node's own
//     writes), so the cache and the copies handed on from it (desired,
//     which share these values) hold each pod's spec once, not once per
//     version still referenced. The shared values are read only, as
//     everything in an informer's cache is.
//
//   - A pod shares the values it has in common with other pods (its
//     template's containers, tolerations, labels; its status's image and
//     condition names) through share (see podSharer).
//
// Objects without metadata (a deletion whose final state is unknown) are
// kept as they are.
type cacheTransform struct {
	// store is the informer's cache, set before the informer starts; nil:
	// nothing is shared with the cached versions.
	store cache.Store
	// share, if set, shares values between pods.
	share *podSharer
}

func (t *cacheTransform) transform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
			m.SetManagedFields(nil)
		}
		return obj, nil
	}
	if p.ManagedFields != nil {
		p.ManagedFields = nil
	}
	if !IsMirror(p) && p.Annotations[AnnotationConfigSource] != SourceName {
		if p.Annotations == nil {
			p.Annotations = make(map[string]string, 1)
		}
		p.Annotations[AnnotationConfigSource] = SourceName
	}
	if t.store != nil {
		prev, exists, err := t.store.GetByKey(p.Namespace + "/" + p.Name)
		if err == nil && exists {
			if old, ok := prev.(*corev1.Pod); ok && old != p && old.UID == p.UID {
				shareUnchanged(old, p)
			}
		}
	}
	if t.share != nil {
		t.share.desiredPart(p) // a spec taken from the cached version: compared by pointer
		t.share.status(p)
	}
	return p, nil
}

// shareUnchanged points p's spec and metadata collections at old's where
// they are equal. p is the new, not yet published, version.
func shareUnchanged(old, p *corev1.Pod) {
	if apiequality.Semantic.DeepEqual(old.Spec, p.Spec) {
		p.Spec = old.Spec
	}
	if maps.Equal(old.Labels, p.Labels) {
		p.Labels = old.Labels
	}
	if maps.Equal(old.Annotations, p.Annotations) {
		p.Annotations = old.Annotations
	}
	if apiequality.Semantic.DeepEqual(old.OwnerReferences, p.OwnerReferences) {
		p.OwnerReferences = old.OwnerReferences
	}
	if slices.Equal(old.Finalizers, p.Finalizers) {
		p.Finalizers = old.Finalizers
	}
}
