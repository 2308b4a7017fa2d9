package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri"
)

// TestCrashRecoveryKill9 churns static pods (adds, removals, crashing
// containers) and kills actorlet with SIGKILL at random points of its
// journal, restarting it each time. After every kill the journal must verify;
// after every restart the runtime itself (not actorlet's view) must show
// exactly one ready sandbox per desired pod, steady containers kept (same
// IDs: nothing restarted), nothing for pods no longer desired, and no CRI
// misuse (no container started twice, never two ready sandboxes per pod).
func TestCrashRecoveryKill9(t *testing.T) {
	kills := 25
	if v, err := strconv.Atoi(os.Getenv("ACTORLET_E2E_KILLS")); err == nil && v > 0 {
		kills = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("ACTORLET_E2E_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (ACTORLET_E2E_SEED to replay), %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, seed))

	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	desired := map[string]bool{} // pod name -> crashing
	next := 0
	add := func(crash bool) {
		name := fmt.Sprintf("p%d", next)
		next++
		env := map[string]string(nil)
		if crash {
			env = map[string]string{"SIM_EXIT_AFTER": "100ms", "SIM_EXIT_CODE": "1"}
		}
		writeManifest(t, d.manifests, name+".yaml", podManifest(name, env))
		desired[name] = crash
	}
	remove := func() {
		names := sortedNames(desired)
		if len(names) == 0 {
			return
		}
		name := names[rng.IntN(len(names))]
		if err := os.Remove(filepath.Join(d.manifests, name+".yaml")); err != nil {
			t.Fatal(err)
		}
		delete(desired, name)
	}
	for i := range 10 {
		add(i%4 == 3)
	}

	steady := map[string]string{} // pod name -> running container ID at the last check
	for k := 0; k <= kills; k++ {
		n := startNode(t, s, d)
		checkConverged(t, s, n, desired, steady)
		if k == kills {
			n.stop()
			break
		}
		// Churn, then kill at a random point of the journal's progress.
		for range 1 + rng.IntN(3) {
			switch rng.IntN(3) {
			case 0:
				add(false)
			case 1:
				add(true)
			default:
				remove()
			}
		}
		killAtRecord(t, n, journalRecords(t, n)+rng.IntN(30))
		n.kill()
		if out, errOut, code := runCLI(t, "journal", "verify", "--root-dir", d.root); code != 0 {
			t.Fatalf("kill %d: journal verify exit %d: %s%s", k+1, code, out, errOut)
		}
	}
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}

// killAtRecord returns once the node's journal holds target records, or
// after half a second if the node has gone quiet before that: the moment to
// kill it.
func killAtRecord(t *testing.T, n *node, target int) {
	deadline := time.Now().Add(500 * time.Millisecond)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for journalRecords(t, n) < target && time.Now().Before(deadline) {
		<-tick.C
	}
}

var recordsRe = regexp.MustCompile(`(?m)^actorlet_journal_records_total (\d+)`)

// journalRecords reads the journal's record counter from /metrics (-1 if
// the node does not answer, e.g. while it idles, which ends the wait).
func journalRecords(t *testing.T, n *node) int {
	m := recordsRe.FindStringSubmatch(n.get(t, "/metrics"))
	if m == nil {
		return -1
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

func sortedNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkConverged waits until the runtime matches the desired pods and checks
// that steady containers survived (same IDs), then records them.
func checkConverged(t *testing.T, s *simRuntime, n *node, desired map[string]bool, steady map[string]string) {
	t.Helper()
	var views map[string]*cri.PodView
	waitFor(t, "the runtime to match the desired pods", func() (bool, string) {
		all, err := s.client.ListPods(context.Background())
		if err != nil {
			return false, err.Error()
		}
		views = map[string]*cri.PodView{}
		for _, v := range all {
			name := v.Name[:len(v.Name)-len("-node-1")]
			if views[name] != nil {
				return false, "two pod UIDs for " + name
			}
			views[name] = v
		}
		for name := range views {
			if _, ok := desired[name]; !ok {
				return false, "leftovers of removed pod " + name
			}
		}
		for name, crash := range desired {
			v := views[name]
			if v == nil || len(v.Sandboxes) != 1 || !v.Sandboxes[0].Ready {
				return false, "pod " + name + " has no single ready sandbox"
			}
			running := 0
			for _, c := range v.Containers {
				if c.State == cri.ContainerRunning {
					running++
				}
			}
			if running > 1 {
				t.Fatalf("pod %s runs %d instances of its container", name, running)
			}
			if !crash && (running != 1 || len(v.Containers) != 1) {
				return false, fmt.Sprintf("steady pod %s: %d containers, %d running", name, len(v.Containers), running)
			}
			if crash && len(v.Containers) > 2 {
				return false, fmt.Sprintf("crashing pod %s keeps %d containers", name, len(v.Containers))
			}
		}
		listed := n.pods(t)
		for name := range desired {
			if _, ok := listed["default/"+name+"-node-1"]; !ok {
				return false, "/pods lacks " + name
			}
		}
		return true, ""
	})
	for name, id := range steady {
		if _, still := desired[name]; !still {
			delete(steady, name)
			continue
		}
		if got := views[name].Containers[0].ID; got != id {
			t.Fatalf("steady pod %s: container %s replaced by %s across an actorlet restart", name, id, got)
		}
	}
	for name, crash := range desired {
		if !crash {
			steady[name] = views[name].Containers[0].ID
		}
	}
	if v := s.violations(t); len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}
