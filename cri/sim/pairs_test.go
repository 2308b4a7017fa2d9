package sim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// pairs read as the map they were made from: toMap gives it back (nil as
// nil, empty as empty), get answers every key as the map does, and
// matches a selector exactly when the map has each of its pairs; pairs
// with the same keys share them, until maxKeySets key sets are kept.
func TestPairsReadAsTheirMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SampledFrom([]string{"", "a", "app", "io.kubernetes.pod.uid", "io.kubernetes.pod.name", "z"})
		vals := rapid.OneOf(
			rapid.SampledFrom([]string{"", "1", "web", "x", "a\x00b", "\x80\xff"}),
			rapid.StringN(0, 300, -1), // lengths of one and two bytes
		)
		ks := newKeySets()
		full := rapid.Bool().Draw(t, "key sets full")
		if full {
			for i := range maxKeySets {
				ks.newPairs(map[string]string{fmt.Sprint("filler-", i): ""})
			}
		}
		var made []pairs
		for i := range rapid.IntRange(1, 4).Draw(t, "maps") {
			var m map[string]string
			if !rapid.Bool().Draw(t, "nil") {
				m = rapid.MapOfN(keys, vals, 0, 6).Draw(t, "m")
			}
			p := ks.newPairs(m)
			checkPairs(t, p, m)
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
			for j, q := range made[:i] {
				if !full && p.keys != nil && q.keys != nil && reflect.DeepEqual(*p.keys, *q.keys) && p.keys != q.keys {
					t.Fatalf("pairs %d and %d have keys %v, not shared", j, i, *p.keys)
				}
			}
			made = append(made, p)
		}
		if len(ks.m) > maxKeySets {
			t.Fatalf("%d key sets kept, at most %d", len(ks.m), maxKeySets)
		}
	})
}

func checkPairs(t *rapid.T, p pairs, m map[string]string) {
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
}

// A value longer than 127 bytes (a length of two bytes) and the values
// after it read back.
func TestPairsLongValue(t *testing.T) {
	ks := newKeySets()
	m := map[string]string{"a": strings.Repeat("x", 200), "b": "after", "c": strings.Repeat("y", 20000)}
	p := ks.newPairs(m)
	if got := p.toMap(); !reflect.DeepEqual(got, m) {
		t.Fatalf("toMap %v, want %v", got, m)
	}
	if v, ok := p.get("b"); !ok || v != "after" {
		t.Fatalf("get(b) = %q, %v", v, ok)
	}
}

// Pairs with the same keys share them; once maxKeySets key sets are kept,
// pairs of another key set have keys of their own.
func TestPairsShareKeys(t *testing.T) {
	ks := newKeySets()
	a := ks.newPairs(map[string]string{"app": "a", "tier": "web"})
	b := ks.newPairs(map[string]string{strings.Clone("tier"): "db", strings.Clone("app"): "b"})
	if a.keys != b.keys {
		t.Fatalf("pairs with keys %v and %v do not share them", *a.keys, *b.keys)
	}
	for i := range maxKeySets {
		ks.newPairs(map[string]string{fmt.Sprint("filler-", i): ""})
	}
	if len(ks.m) != maxKeySets {
		t.Fatalf("%d key sets kept, want %d", len(ks.m), maxKeySets)
	}
	c, d := ks.newPairs(map[string]string{"new": "1"}), ks.newPairs(map[string]string{"new": "2"})
	if c.keys == d.keys || len(ks.m) != maxKeySets {
		t.Fatalf("with the key sets full, a new one is shared (%v) or kept (%d key sets)", c.keys == d.keys, len(ks.m))
	}
	if v, _ := d.get("new"); v != "2" {
		t.Fatalf("get(new) = %q, want 2", v)
	}
}
