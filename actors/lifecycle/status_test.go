package lifecycle

import (
	"fmt"
	"testing"
)

// The conditions' messages name containers as fmt's %s prints them, the
// kubelet's format.
func TestNameListAsFmt(t *testing.T) {
	for _, names := range [][]string{{"a"}, {"app", "side car"}, {"x", "", "y"}} {
		if got, want := nameList(names), fmt.Sprintf("%s", names); got != want {
			t.Errorf("nameList(%q) = %q, want %q", names, got, want)
		}
	}
}
