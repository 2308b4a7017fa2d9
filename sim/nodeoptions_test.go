package sim

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/agent"
)

type admitAll struct{}

func (admitAll) Admit(*corev1.Pod, []*corev1.Pod) (string, string) { return "", "" }

// The simulation's nodes take a real node's options: those it drives
// change the run (here the core's crash-loop back-off), and those it does
// not drive are refused by name, never silently ignored.
func TestNodeOptions(t *testing.T) {
	_, err := New(Options{Seed: 1, Pods: 1, Node: []agent.Option{agent.WithAdmitHandler(admitAll{})}})
	if err == nil || !strings.Contains(err.Error(), "admission") {
		t.Fatalf("New with an admit handler: %v, want a refusal naming admission", err)
	}

	opts := Options{Seed: 5, Nodes: 2, Pods: 40, Duration: 5 * time.Minute, Faults: defaultPlan(t), CrashEvery: 50}
	def := run(t, opts)
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = time.Second, 5*time.Second
	opts.Node = []agent.Option{agent.WithLifecycle(lc)}
	fast := run(t, opts)
	for _, v := range append(def.Violations, fast.Violations...) {
		t.Error(v)
	}
	if def.Digest == fast.Digest {
		t.Errorf("the same digest %s with a 1s crash-loop back-off as with the default", def.Digest)
	}
}
