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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/cri"
)

// TestCrashRecoveryKill9 churns static pods on `actorlet sim-runtime` and
// kills actorlet with SIGKILL 25 times (see runChurn); the simulated runtime
// also reports CRI misuse (a container started twice, two ready sandboxes
// for a pod).
func TestCrashRecoveryKill9(t *testing.T) {
	s := startSim(t, t.TempDir())
	runChurn(t, churnRuntime{
		endpoint: s.endpoint, client: s.client, misuse: s.violations,
		manifest: func(name string, crash bool) string {
			if crash {
				return podManifest(name, map[string]string{"SIM_EXIT_AFTER": "100ms", "SIM_EXIT_CODE": "1"})
			}
			return podManifest(name, nil)
		},
	}, newNodeDirs(t), 25)
}

// churnRuntime is what the kill -9 churn needs of a runtime.
type churnRuntime struct {
	endpoint string
	client   *cri.Client
	// misuse returns the CRI misuse the runtime saw (nil: it cannot tell).
	misuse func(t *testing.T) []string
	// manifest is pod name's static manifest; crash makes its container
	// exit with code 1 soon after each start.
	manifest func(name string, crash bool) string
	// extra are more flags for actorlet run.
	extra []string
	// failedStarts: a start can fail in the runtime itself, so a steady
	// pod's container may be replaced by its next attempt, which the
	// restart count shows, and its dead one kept. (containerd behind
	// cri-proxy's faults: a restart cuts a StartContainer in flight, and
	// containerd leaves the container EXITED with StartError.)
	failedStarts bool
	// strandedTasks: a start cut inside containerd's task creation leaves
	// an EXITED container (StartError, "failed to create containerd task")
	// whose task containerd keeps, so RemoveContainer refuses it; actorlet
	// ends such a task through containerd's own task service, which a
	// CRI-only proxy (cri-proxy) does not pass on. Such containers stay,
	// and are not counted against a crashing pod.
	strandedTasks bool
}

// runChurn churns static pods (adds, removals, crashing containers) and
// kills actorlet with SIGKILL at random points of its journal, kills times
// (ACTORLET_E2E_KILLS overrides; ACTORLET_E2E_SEED replays a run). After
// every kill the journal must verify; after every restart the runtime must
// match the desired pods (see checkConverged). It ends with every pod
// removed from the runtime.
func runChurn(t *testing.T, rt churnRuntime, d nodeDirs, kills int) {
	t.Helper()
	if v, err := strconv.Atoi(os.Getenv("ACTORLET_E2E_KILLS")); err == nil && v > 0 {
		kills = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("ACTORLET_E2E_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (ACTORLET_E2E_SEED to replay), %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, seed))

	desired := map[string]bool{} // pod name -> crashing
	next := 0
	add := func(crash bool) {
		name := fmt.Sprintf("p%d", next)
		next++
		writeManifest(t, d.manifests, name+".yaml", rt.manifest(name, crash))
		desired[name] = crash
	}
	remove := func(name string) {
		if err := os.Remove(filepath.Join(d.manifests, name+".yaml")); err != nil {
			t.Fatal(err)
		}
		delete(desired, name)
	}
	for i := range 10 {
		add(i%4 == 3)
	}

	seen := seenState{containers: map[string]string{}, restarts: map[string]int32{}}
	for k := 0; ; k++ {
		n := startNode(t, rt.endpoint, d, rt.extra...)
		checkConverged(t, rt, d, n, desired, &seen)
		if k == kills {
			for _, name := range sortedNames(desired) {
				remove(name)
			}
			checkConverged(t, rt, d, n, desired, &seen)
			n.stop()
			checkReplay(t, d, "the end")
			return
		}
		// Churn, then kill at a random point of the journal's progress.
		for range 1 + rng.IntN(3) {
			switch rng.IntN(3) {
			case 0:
				add(false)
			case 1:
				add(true)
			default:
				if names := sortedNames(desired); len(names) > 0 {
					remove(names[rng.IntN(len(names))])
				}
			}
		}
		killAtRecord(t, n, journalRecords(t, n)+rng.IntN(30))
		n.kill()
		if out, errOut, code := runCLI(t, "journal", "verify", "--root-dir", d.root); code != 0 {
			t.Fatalf("kill %d: journal verify exit %d: %s%s", k+1, code, out, errOut)
		}
		checkReplay(t, d, fmt.Sprintf("kill %d", k+1))
	}
}

// checkReplay checks that `actorlet journal replay` re-folds every pod of
// the node's journal without divergence or damage.
func checkReplay(t *testing.T, d nodeDirs, when string) {
	t.Helper()
	out, errOut, code := runCLI(t, "journal", "replay", "--root-dir", d.root)
	if code != 0 || !strings.Contains(out, " 0 divergences, 0 damaged\n") {
		t.Fatalf("%s: journal replay exit %d: %s%s", when, code, out, errOut)
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

// seenState is what the last check saw, to compare across restarts: the
// running container of each steady pod, and each pod's restart count.
type seenState struct {
	containers map[string]string
	restarts   map[string]int32
}

// checkConverged waits until the runtime itself (not actorlet's view) shows
// exactly one ready sandbox per desired pod of this node, with its
// containers in it, and nothing of pods no longer desired; then it checks
// that steady containers survived (same IDs) and that no restart count went
// down, or for a steady pod, changed.
func checkConverged(t *testing.T, rt churnRuntime, d nodeDirs, n *node, desired map[string]bool, seen *seenState) {
	t.Helper()
	suffix := "-" + d.name
	var views map[string]*cri.PodView
	var listed map[string]corev1.Pod
	waitFor(t, "the runtime to match the desired pods", func() (bool, string) {
		all, err := rt.client.ListPods(context.Background())
		if err != nil {
			return false, err.Error()
		}
		views = map[string]*cri.PodView{}
		for _, v := range all {
			name, ours := strings.CutSuffix(v.Name, suffix)
			if !ours {
				continue
			}
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
				if c.SandboxID != v.Sandboxes[0].ID {
					return false, fmt.Sprintf("pod %s: container %s outside its sandbox", name, c.ID)
				}
				if c.State == cri.ContainerRunning {
					running++
				}
			}
			if running > 1 {
				t.Fatalf("pod %s runs %d instances of its container", name, running)
			}
			// A steady pod runs one container. Besides it, it may keep
			// one dead container that never ran: a start cut by the kill
			// (containerd ends a StartContainer whose client went away
			// with StartError, exit 128, and the next attempt follows, as
			// the kubelet's would). With runtime faults, any one more.
			dead := len(v.Containers) - running
			deadOK := dead == 0 || dead == 1 && (rt.failedStarts || neverRan(v.Containers))
			if !crash && (running != 1 || !deadOK) {
				var cs []string
				for _, c := range v.Containers {
					cs = append(cs, fmt.Sprintf("%.12s attempt %d %v exit %d %s %q started %v", c.ID, c.Attempt, c.State, c.ExitCode, c.Reason, c.Message, !c.StartedAt.IsZero()))
				}
				return false, fmt.Sprintf("steady pod %s (%s): %d containers, %d running: %s", name, v.UID, len(v.Containers), running, strings.Join(cs, "; "))
			}
			if crash && len(v.Containers)-stranded(rt, v.Containers) > 2 {
				return false, fmt.Sprintf("crashing pod %s keeps %d containers", name, len(v.Containers))
			}
		}
		listed = n.pods(t)
		for name := range desired {
			if p, ok := listed["default/"+name+suffix]; !ok || len(p.Status.ContainerStatuses) != 1 {
				return false, "/pods lacks " + name
			}
		}
		return true, ""
	})
	restarts := func(name string) int32 {
		return listed["default/"+name+suffix].Status.ContainerStatuses[0].RestartCount
	}
	for name, id := range seen.containers {
		if _, still := desired[name]; !still {
			delete(seen.containers, name)
			continue
		}
		if got := runningID(views[name]); got != id && !(rt.failedStarts && restarts(name) > seen.restarts[name]) {
			t.Fatalf("steady pod %s: container %s replaced by %s across an actorlet restart", name, id, got)
		}
	}
	for name, crash := range desired {
		rc := restarts(name)
		if before, ok := seen.restarts[name]; ok && (rc < before || !crash && !rt.failedStarts && rc != before) {
			t.Fatalf("pod %s: restart count %d, was %d before the restart", name, rc, before)
		}
		seen.restarts[name] = rc
		if !crash {
			seen.containers[name] = runningID(views[name])
		}
	}
	if rt.misuse != nil {
		if v := rt.misuse(t); len(v) > 0 {
			t.Fatalf("CRI misuse: %v", v)
		}
	}
}

// neverRan reports whether every container of cs that is not running
// exited without ever having started (a failed start).
// stranded counts the containers of cs whose start was cut inside
// containerd's task creation, when rt cannot end their tasks (see
// churnRuntime.strandedTasks); else 0.
func stranded(rt churnRuntime, cs []cri.Container) int {
	if !rt.strandedTasks {
		return 0
	}
	n := 0
	for _, c := range cs {
		if c.State == cri.ContainerExited && c.Reason == "StartError" && strings.Contains(c.Message, "failed to create containerd task") {
			n++
		}
	}
	return n
}

func neverRan(cs []cri.Container) bool {
	for _, c := range cs {
		if c.State != cri.ContainerRunning && (c.State != cri.ContainerExited || !c.StartedAt.IsZero()) {
			return false
		}
	}
	return true
}

// runningID is the ID of the pod's running container ("" if none).
func runningID(v *cri.PodView) string {
	for _, c := range v.Containers {
		if c.State == cri.ContainerRunning {
			return c.ID
		}
	}
	return ""
}
