package lifecycle_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal/replay"
)

// TestResizeTranscripts runs the in-place resize scripts in
// testdata/resize, with the commands of TestTranscripts and two more:
//
//	allocatable cpu=2 memory=1Gi   the node's allocatable (Config.Allocatable)
//	resources                      each container's allocatedResources and resources in the status
//	generations                    the status' observedGeneration and its conditions'
//
// Rewrite the expected output with: go test ./actors/lifecycle -run ResizeTranscripts -rewrite
func TestResizeTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/resize", func(t *testing.T, path string) {
		h := newHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.runResize(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
		if p := replay.Fold("uid-1", nil, h.journal); len(p.Divergences) > 0 {
			t.Errorf("journal replay found divergences in the transcript's journal: %v", p.Divergences)
		}
	})
}

func (h *harness) runResize(d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "allocatable":
		h.cfg.Allocatable = corev1.ResourceList{}
		for _, a := range d.CmdArgs {
			q, err := resource.ParseQuantity(strings.Join(a.Vals, ""))
			if err != nil {
				return "", fmt.Errorf("allocatable %s: %w", a.Key, err)
			}
			h.cfg.Allocatable[corev1.ResourceName(a.Key)] = q
		}
		return "ok\n", nil
	case "resources":
		st := lifecycle.Status(h.state, lifecycle.StatusEnv{RuntimeName: "sim", Now: h.now})
		var b strings.Builder
		for _, cs := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
			fmt.Fprintf(&b, "%s: allocated=%s", cs.Name, list(cs.AllocatedResources))
			if cs.Resources != nil {
				fmt.Fprintf(&b, " requests=%s limits=%s", list(cs.Resources.Requests), list(cs.Resources.Limits))
			}
			b.WriteByte('\n')
		}
		return b.String(), nil
	case "generations":
		st := lifecycle.Status(h.state, lifecycle.StatusEnv{RuntimeName: "sim", Now: h.now})
		var b strings.Builder
		fmt.Fprintf(&b, "status=%d", st.ObservedGeneration)
		for _, c := range st.Conditions {
			fmt.Fprintf(&b, " %s=%d", c.Type, c.ObservedGeneration)
		}
		b.WriteByte('\n')
		return b.String(), nil
	}
	return h.run(d)
}

func list(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "{}"
	}
	var parts []string
	for name, q := range l {
		parts = append(parts, fmt.Sprintf("%s:%s", name, q.String()))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}
