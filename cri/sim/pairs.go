package sim

import (
	"encoding/binary"
	"slices"
	"sort"
)

// pairs is a string map that never changes: the labels or annotations of
// a sandbox or container. Its keys, sorted, are shared by all pairs with
// the same keys (keySets: the objects of a node carry the same few sets
// of label and annotation keys), and its values are one string, each
// value prefixed by its length (uvarint), in the order of the keys. So a
// pod's labels cost one small allocation, not a slice of two string
// headers per label (nor a map). Reads decode the values: get is a binary
// search and a walk over the values before the one asked for.
//
// A nil map is zero pairs and an empty one pairs with no keys, so that
// toMap gives back what newPairs was given.
type pairs struct {
	keys *pairKeys // nil for a nil map
	vals string
}

// pairKeys are the sorted keys of pairs.
type pairKeys []string

// keySets interns the key sets of pairs, up to maxKeySets of them (pairs
// with other keys get keys of their own). Not safe for concurrent use:
// guarded by Runtime.mu.
type keySets struct {
	m       map[string]*pairKeys // by the keys, each prefixed by its length
	scratch []string
	buf     []byte
}

// maxKeySets bounds the key sets a Runtime keeps, whatever its clients
// send.
const maxKeySets = 4096

func newKeySets() *keySets { return &keySets{m: make(map[string]*pairKeys)} }

// newPairs copies m.
func (ks *keySets) newPairs(m map[string]string) pairs {
	if m == nil {
		return pairs{}
	}
	keys := ks.scratch[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ks.scratch = keys
	ks.buf = ks.buf[:0]
	for _, k := range keys {
		ks.buf = binary.AppendUvarint(ks.buf, uint64(len(k)))
		ks.buf = append(ks.buf, k...)
	}
	pk, ok := ks.m[string(ks.buf)]
	if !ok {
		own := pairKeys(slices.Clone(keys))
		pk = &own
		if len(ks.m) < maxKeySets {
			ks.m[string(ks.buf)] = pk
		}
	}
	clear(ks.scratch) // keeps no key of m alive
	ks.buf = ks.buf[:0]
	for _, k := range *pk {
		v := m[k]
		ks.buf = binary.AppendUvarint(ks.buf, uint64(len(v)))
		ks.buf = append(ks.buf, v...)
	}
	return pairs{keys: pk, vals: string(ks.buf)}
}

// nextVal decodes the value at the start of vals and returns it and the
// rest. vals is what newPairs encoded: a length is whole.
func nextVal(vals string) (v, rest string) {
	// At most binary.MaxVarintLen64 bytes: the conversion stays on the stack.
	n, w := binary.Uvarint([]byte(vals[:min(len(vals), binary.MaxVarintLen64)]))
	return vals[w : w+int(n)], vals[w+int(n):]
}

// get returns the value of key k, and whether p has it.
func (p pairs) get(k string) (string, bool) {
	if p.keys == nil {
		return "", false
	}
	keys := *p.keys
	i := sort.SearchStrings(keys, k)
	if i == len(keys) || keys[i] != k {
		return "", false
	}
	v, rest := nextVal(p.vals)
	for range i {
		v, rest = nextVal(rest)
	}
	return v, true
}

// toMap is p as a new map (nil for zero pairs).
func (p pairs) toMap() map[string]string {
	if p.keys == nil {
		return nil
	}
	m := make(map[string]string, len(*p.keys))
	rest := p.vals
	for _, k := range *p.keys {
		m[k], rest = nextVal(rest)
	}
	return m
}

// matches reports whether p has every key of sel with its value (the
// CRI's MatchLabels-only selector; an empty selector matches everything).
func (p pairs) matches(sel map[string]string) bool {
	for k, v := range sel {
		if got, ok := p.get(k); !ok || got != v {
			return false
		}
	}
	return true
}
