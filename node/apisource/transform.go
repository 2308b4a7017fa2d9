package apisource

import "k8s.io/apimachinery/pkg/api/meta"

// dropManagedFields is the pod informers' transform: a pod is kept in the
// cache without its managedFields, which nothing on a node reads (the
// status writer patches the status, the mirror pods' comparisons clear
// them) and which are a sixth of a pod object's memory in a fleet's
// shared cache. Objects without metadata (a deletion whose final state is
// unknown) are kept as they are.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
