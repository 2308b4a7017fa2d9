package podspec

import (
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{
		"A":     "a",
		"B":     "b",
		"EMPTY": "",
		"REF":   "$(A)", // a value with a reference is not expanded again
		"":      "unnamed",
	}
	cases := []struct {
		in, want string
	}{
		{"", ""},
		{"plain", "plain"},
		{"$(A)", "a"},
		{"___$(B)___", "___b___"},
		{"$(A)$(B)", "ab"},
		{"$(A)-$(B)-$(A)", "a-b-a"},
		{"$(EMPTY)", ""},
		{"x$(EMPTY)y", "xy"},
		{"$(MISSING)", "$(MISSING)"},
		{"pre-$(MISSING)-$(A)", "pre-$(MISSING)-a"},
		{"$(REF)", "$(A)"},
		{"$()", "unnamed"},
		// Escapes.
		{"$$", "$"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$a"},
		{"$$$$(A)", "$$(A)"},
		{"f000-$$A", "f000-$A"},
		{"$$$", "$$"},
		// A $ that starts no reference is kept.
		{"$", "$"},
		{"a$", "a$"},
		{"$A", "$A"},
		{"${A}", "${A}"},
		{"100$ off", "100$ off"},
		// Incomplete references are literal, and scanning goes on after "$(".
		{"$(A", "$(A"},
		{"$(", "$("},
		{"$(A)$(B", "a$(B"},
		{"$($(A)", "$($(A)"}, // the name is "$(A"
		// A name runs to the first ')', whatever it holds.
		{"$(A$(B)", "$(A$(B)"},
		{"$(A B)", "$(A B)"},
		{"$((A))", "$((A))"},
		// Not ASCII around references.
		{"é$(A)ü", "éaü"},
	}
	lookup := lookupIn(vars)
	for _, c := range cases {
		if got := expand(c.in, lookup); got != c.want {
			t.Errorf("expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLookupInPrecedence(t *testing.T) {
	lookup := lookupIn(map[string]string{"X": "first"}, map[string]string{"X": "second", "Y": "y"})
	cases := []struct {
		name string
		want string
		ok   bool
	}{
		{"X", "first", true},
		{"Y", "y", true},
		{"Z", "", false},
	}
	for _, c := range cases {
		if got, ok := lookup(c.name); got != c.want || ok != c.ok {
			t.Errorf("lookup(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestExpandAll(t *testing.T) {
	lookup := lookupIn(map[string]string{"A": "a"})
	if got := expandAll(nil, lookup); got != nil {
		t.Errorf("expandAll(nil) = %v, want nil", got)
	}
	in := []string{"$(A)", "$$(A)", "b"}
	got := expandAll(in, lookup)
	if want := []string{"a", "$(A)", "b"}; !slices.Equal(got, want) {
		t.Errorf("expandAll = %q, want %q", got, want)
	}
	if in[0] != "$(A)" {
		t.Errorf("expandAll changed its input: %q", in)
	}
}
