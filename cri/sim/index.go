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
// A value carried by one object, as a pod UID mostly is, costs a map
// entry of the object alone, not of a slice and its array.
//
// Not safe for concurrent use: guarded by Runtime.mu.
type labelIndex[T comparable] struct {
	key  string
	one  map[string]T   // values carried by one object
	many map[string][]T // values carried by more, oldest first
	buf  *[1]T          // get's result for a value in one (keeps its object until the next get)
}

func newLabelIndex[T comparable](key string) labelIndex[T] {
	return labelIndex[T]{key: key, one: make(map[string]T), many: make(map[string][]T), buf: new([1]T)}
}

// add indexes o, which must be newer than every object indexed so far.
func (ix labelIndex[T]) add(labels pairs, o T) {
	v, ok := labels.get(ix.key)
	if !ok {
		return
	}
	if objs, ok := ix.many[v]; ok {
		ix.many[v] = append(objs, o)
	} else if first, ok := ix.one[v]; ok {
		delete(ix.one, v)
		ix.many[v] = []T{first, o}
	} else {
		ix.one[v] = o
	}
}

// remove forgets o; the value's entry goes when its last object does.
func (ix labelIndex[T]) remove(labels pairs, o T) {
	v, ok := labels.get(ix.key)
	if !ok {
		return
	}
	if only, ok := ix.one[v]; ok {
		if only == o {
			delete(ix.one, v)
		}
		return
	}
	objs := ix.many[v]
	i := slices.Index(objs, o)
	if i < 0 {
		return
	}
	if len(objs) == 2 {
		ix.one[v] = objs[1-i]
		delete(ix.many, v)
		return
	}
	ix.many[v] = slices.Delete(objs, i, i+1) // zeroes the freed slot
}

// get returns the objects carrying value v, oldest first. The result is
// the index's own slice: read it under the lock, do not keep it, and call
// get or lookup again only when done with it.
func (ix labelIndex[T]) get(v string) []T {
	if o, ok := ix.one[v]; ok {
		ix.buf[0] = o
		return ix.buf[:]
	}
	return ix.many[v]
}

// lookup returns the objects carrying the value sel asks for, as get,
// and true; or false if sel does not pin the label.
func (ix labelIndex[T]) lookup(sel map[string]string) ([]T, bool) {
	v, ok := sel[ix.key]
	if !ok {
		return nil, false
	}
	return ix.get(v), true
}
