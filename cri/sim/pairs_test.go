package sim

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// pairs read as the map they were made from: toMap gives it back (nil as
// nil, empty as empty), get answers every key as the map does, and
// matches a selector exactly when the map has each of its pairs.
func TestPairsReadAsTheirMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SampledFrom([]string{"", "a", "app", "io.kubernetes.pod.uid", "io.kubernetes.pod.name", "z"})
		vals := rapid.SampledFrom([]string{"", "1", "web", "x"})
		var m map[string]string
		if !rapid.Bool().Draw(t, "nil") {
			m = rapid.MapOfN(keys, vals, 0, 6).Draw(t, "m")
		}
		p := newPairs(m)
		if got := p.toMap(); !reflect.DeepEqual(got, m) {
			t.Fatalf("toMap %#v, want %#v", got, m)
		}
		for _, k := range []string{"", "a", "app", "b", "io.kubernetes.pod.uid", "io.kubernetes.pod.name", "z", "zz"} {
			v, ok := p.get(k)
			wv, wok := m[k]
			if v != wv || ok != wok {
				t.Fatalf("get(%q) = %q, %v; the map has %q, %v", k, v, ok, wv, wok)
			}
		}
		sel := rapid.MapOfN(keys, vals, 0, 3).Draw(t, "selector")
		want := true
		for k, v := range sel {
			if got, ok := m[k]; !ok || got != v {
				want = false
			}
		}
		if got := p.matches(sel); got != want {
			t.Fatalf("matches(%v) = %v on %v, want %v", sel, got, m, want)
		}
	})
}
