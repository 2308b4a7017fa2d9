package sim

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A removed pod's clean-up (lifecycle.CleanUpPod) is an effect with a
// journaled outcome, PodCleanedUp: with node crashes right after journal
// appends, some crash falls between a pod's PodRemoved and its
// PodCleanedUp, and recovery hands the clean-up out again; every removal is
// cleaned up exactly once in the journal, and no shell finishes before it.
func TestCleanUpSurvivesCrashes(t *testing.T) {
	recovered := 0
	for _, seed := range []uint64{1, 2, 3, 4} {
		opts := Options{Seed: seed, Nodes: 3, Pods: 60, Duration: 10 * time.Minute, Faults: defaultPlan(t), CrashEvery: 8}
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		// By node and pod: a removal journaled, not yet cleaned up; a crash
		// in between; clean-ups journaled in the pod's present life.
		pending, crashed, cleaned := map[string]bool{}, map[string]bool{}, map[string]int{}
		s.trace = func(n *Node, uid, what string) {
			key := n.name + "/" + uid
			switch {
			case what == "crash":
				for k := range pending {
					if strings.HasPrefix(k, n.name+"/") {
						crashed[k] = true
					}
				}
			case what == "finish":
				if pending[key] {
					t.Errorf("seed %d: %s finished before its clean-up was journaled", seed, key)
				}
			case strings.HasPrefix(what, "input "):
				if strings.Contains(what, "pod_accepted:") {
					cleaned[key] = 0 // a new life
				}
				if strings.Contains(what, "pod_removed:") {
					pending[key] = true
				}
				if strings.Contains(what, "pod_cleaned_up:") {
					if !pending[key] {
						t.Errorf("seed %d: %s cleaned up without a removal pending", seed, key)
					}
					if cleaned[key]++; cleaned[key] > 1 {
						t.Errorf("seed %d: %s cleaned up twice in one life", seed, key)
					}
					if crashed[key] {
						recovered++
					}
					delete(pending, key)
					delete(crashed, key)
				}
			}
		}
		r, err := s.Run(context.Background())
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Violations {
			t.Errorf("seed %d: %s", seed, v)
		}
		for key := range pending {
			t.Errorf("seed %d: %s was removed but never cleaned up", seed, key)
		}
	}
	if recovered == 0 {
		t.Error("no crash fell between a removal and its clean-up: the crash point is not exercised")
	}
	t.Logf("clean-ups carried out again after a crash: %d", recovered)
}
