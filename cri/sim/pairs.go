package sim

import (
	"slices"
	"sort"
)

// pairs is a string map kept as one slice of keys and values, alternating,
// sorted by key: the labels and annotations of a sandbox or container,
// which never change after creation, in about half of a map's memory (a
// small map takes a group of eight slots, with room it does not use, and a
// header). Reads are a binary search.
//
// A nil map is nil pairs and an empty one empty non-nil pairs, so that
// toMap gives back what newPairs was given.
type pairs []string

// newPairs copies m; its strings are shared, not copied.
func newPairs(m map[string]string) pairs {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := make(pairs, 0, 2*len(m))
	for _, k := range keys {
		p = append(p, k, m[k])
	}
	return p
}

// get returns the value of key k, and whether p has it.
func (p pairs) get(k string) (string, bool) {
	n := len(p) / 2
	i := sort.Search(n, func(i int) bool { return p[2*i] >= k })
	if i < n && p[2*i] == k {
		return p[2*i+1], true
	}
	return "", false
}

// toMap is p as a new map (nil for nil pairs).
func (p pairs) toMap() map[string]string {
	if p == nil {
		return nil
	}
	m := make(map[string]string, len(p)/2)
	for i := 0; i < len(p); i += 2 {
		m[p[i]] = p[i+1]
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
