package sim

import "slices"

// labelIndex finds objects by the value of one label (LabelPodUID), so
// that a List call whose selector pins that label looks at the pod's few
// objects instead of all of them.
//
// Guarantees:
//   - An object is indexed under v exactly while it exists and its
//     labels map key to v; objects without the label are not indexed
//     (an empty value is a value: it is indexed, as a selector asking
//     for it matches it).
//   - Each value's objects are kept oldest first, as objects are added
//     in creation order and removals keep the order.
//   - Labels never change after creation, so add and remove are given
//     the same labels.
//
// Not safe for concurrent use: guarded by Runtime.mu.
type labelIndex[T comparable] struct {
	key string
	m   map[string][]T
}

func newLabelIndex[T comparable](key string) labelIndex[T] {
	return labelIndex[T]{key: key, m: make(map[string][]T)}
}

// add indexes o, which must be newer than every object indexed so far.
func (ix labelIndex[T]) add(labels pairs, o T) {
	if v, ok := labels.get(ix.key); ok {
		ix.m[v] = append(ix.m[v], o)
	}
}

// remove forgets o; the value's entry goes when its last object does.
func (ix labelIndex[T]) remove(labels pairs, o T) {
	v, ok := labels.get(ix.key)
	if !ok {
		return
	}
	objs := ix.m[v]
	i := slices.Index(objs, o)
	if i < 0 {
		return
	}
	if len(objs) == 1 {
		delete(ix.m, v)
		return
	}
	ix.m[v] = slices.Delete(objs, i, i+1) // zeroes the freed slot
}

// get returns the objects carrying value v, oldest first: the index's
// own slice, as lookup's.
func (ix labelIndex[T]) get(v string) []T { return ix.m[v] }

// lookup returns the objects carrying the value sel asks for, oldest
// first, and true; or false if sel does not pin the label. The result
// is the index's own slice: read it under the lock, do not keep it.
func (ix labelIndex[T]) lookup(sel map[string]string) ([]T, bool) {
	v, ok := sel[ix.key]
	if !ok {
		return nil, false
	}
	return ix.m[v], true
}
