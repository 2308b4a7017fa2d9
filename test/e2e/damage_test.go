package e2e

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/cri"
)

// The damage suite: a node runs two long-lived pods and a restartPolicy
// Never pod that has completed, on the simulated runtime served over a
// socket (it outlives actorlet, as containerd does). Its journal is damaged
// in one way; the node starts again. After each: no container of a live pod
// was restarted or duplicated (same IDs), the Never pod did not run again,
// the runtime holds no orphan, and the node converges to the pods it had.

// damageFixture is a node with its pods running (and the job completed),
// and what the runtime held then.
type damageFixture struct {
	s      *simRuntime
	d      nodeDirs
	n      *node
	before map[string]*cri.PodView // by pod UID
	uids   map[string]string       // namespace/name -> UID
}

var damagePods = []string{"default/web-node-1", "default/api-node-1", "default/job-node-1"}

func newDamageFixture(t *testing.T) *damageFixture {
	t.Helper()
	f := &damageFixture{s: startSim(t, t.TempDir()), d: newNodeDirs(t)}
	writeManifest(t, f.d.manifests, "web.yaml", podManifest("web", nil))
	writeManifest(t, f.d.manifests, "api.yaml", podManifest("api", nil))
	writeManifest(t, f.d.manifests, "job.yaml", strings.Replace(
		podManifest("job", map[string]string{"SIM_EXIT_AFTER": "0s", "SIM_EXIT_CODE": "0"}),
		"spec:\n", "spec:\n  restartPolicy: Never\n", 1))
	f.n = startNode(t, f.s.endpoint, f.d)
	f.uids = f.waitConverged(t, f.n)
	views, err := f.s.client.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	f.before = views
	return f
}

// waitConverged waits until web and api run and job has succeeded, and
// returns the pods' UIDs.
func (f *damageFixture) waitConverged(t *testing.T, n *node) map[string]string {
	t.Helper()
	uids := map[string]string{}
	waitFor(t, "web and api Running, job Succeeded", func() (bool, string) {
		pods := n.pods(t)
		for _, name := range damagePods {
			p, ok := pods[name]
			want := corev1.PodRunning
			if strings.HasPrefix(name, "default/job") {
				want = corev1.PodSucceeded
			}
			if !ok || p.Status.Phase != want {
				return false, fmt.Sprintf("%s: %v", name, p.Status.Phase)
			}
			uids[name] = string(p.UID)
		}
		return true, ""
	})
	return uids
}

// check starts the node again after the damage and checks the guarantees;
// rebuilt is the number of pods whose history the damage cost.
func (f *damageFixture) check(t *testing.T, rebuilt int) *node {
	t.Helper()
	n := startNode(t, f.s.endpoint, f.d)
	t.Cleanup(n.stop)
	if rebuilt > 0 {
		waitFor(t, "the rebuilds logged", func() (bool, string) {
			got := strings.Count(n.output(), "pod rebuilt from the runtime")
			return got >= rebuilt, fmt.Sprintf("%d of %d rebuilds logged", got, rebuilt)
		})
	}
	uids := f.waitConverged(t, n)
	if !maps.Equal(uids, f.uids) {
		t.Fatalf("pod UIDs after the damage %v, before %v", uids, f.uids)
	}
	pods := n.pods(t)
	for _, name := range damagePods {
		p := pods[name]
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount != 0 {
				t.Errorf("%s: container %s restart count %d after the damage, want 0", name, cs.Name, cs.RestartCount)
			}
		}
	}
	after, err := f.s.client.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for uid := range after {
		if !slices.Contains(slices.Collect(maps.Values(f.uids)), uid) {
			t.Errorf("orphan in the runtime: pod UID %s", uid)
		}
	}
	for name, uid := range f.uids {
		b, a := f.before[uid], after[uid]
		if a == nil {
			if !strings.HasPrefix(name, "default/job") {
				t.Errorf("%s: gone from the runtime", name)
			}
			continue
		}
		if got, want := ids(a), ids(b); !slices.Equal(got, want) {
			t.Errorf("%s: runtime objects after the damage %v, before %v (restarted, duplicated or re-run)", name, got, want)
		}
		for _, c := range a.Containers {
			if !strings.HasPrefix(name, "default/job") && c.State != cri.ContainerRunning {
				t.Errorf("%s: container %s is %v, want running", name, c.ID, c.State)
			}
		}
	}
	if v := f.s.violations(t); len(v) > 0 {
		t.Errorf("CRI misuse: %v", v)
	}
	return n
}

// ids lists a view's sandbox and container IDs, sorted.
func ids(v *cri.PodView) []string {
	var out []string
	for _, sb := range v.Sandboxes {
		out = append(out, "sandbox:"+sb.ID)
	}
	for _, c := range v.Containers {
		out = append(out, "container:"+c.ID)
	}
	slices.Sort(out)
	return out
}

func (f *damageFixture) db() string { return filepath.Join(f.d.root, "journal.db") }

func TestDamageZeroLengthJournal(t *testing.T) {
	f := newDamageFixture(t)
	f.n.stop()
	if err := os.Truncate(f.db(), 0); err != nil {
		t.Fatal(err)
	}
	f.check(t, 3)
}

func TestDamageGarbageJournal(t *testing.T) {
	f := newDamageFixture(t)
	f.n.stop()
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(f.db(), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	n := f.check(t, 3)
	if !strings.Contains(n.output(), "QUARANTINED") {
		t.Errorf("no loud report of the quarantine")
	}
}

func TestDamageTruncatedJournal(t *testing.T) {
	f := newDamageFixture(t)
	f.n.stop()
	st, err := os.Stat(f.db())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f.db(), st.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.check(t, 0) // quarantined or damaged in part: whatever was lost is rebuilt
}

// TestDamageJournalDeletedUnderRunningNode: journal.db removed while the
// node runs (its writes go on into the unlinked file), then a restart: the
// node finds no journal while the runtime holds its pods.
func TestDamageJournalDeletedUnderRunningNode(t *testing.T) {
	f := newDamageFixture(t)
	if err := os.Remove(f.db()); err != nil {
		t.Fatal(err)
	}
	f.n.stop()
	f.check(t, 3)
}

// TestDamageOperatorDeletesJournal is the operator's check: delete
// journal.db of a stopped node with a finished Never pod and running pods,
// start it: nothing restarts and the Never pod does not run again; and a
// second, ordinary restart finds everything journaled again.
func TestDamageOperatorDeletesJournal(t *testing.T) {
	f := newDamageFixture(t)
	f.n.stop()
	if err := os.Remove(f.db()); err != nil {
		t.Fatal(err)
	}
	n := f.check(t, 3)
	n.stop()
	n = f.check(t, 0)
	if strings.Contains(n.output(), "pod rebuilt from the runtime") {
		t.Errorf("the restart after a rebuild rebuilt again: the rebuilt state was not journaled")
	}
}

// TestDamageFlippedByteInOnePodsRecord: a byte flipped in one pod's record
// of a stopped node. An error log names the pod, its container keeps its
// ID, the other pods are untouched. (Relies on the journal's record
// checksums.)
func TestDamageFlippedByteInOnePodsRecord(t *testing.T) {
	f := newDamageFixture(t)
	f.n.stop()
	uid := f.uids["default/web-node-1"]
	b, err := os.ReadFile(f.db())
	if err != nil {
		t.Fatal(err)
	}
	// The pod's spec is journaled in its PodAccepted record: flip a byte of
	// its image name there, which names only this pod.
	needle := []byte(`"name":"web-node-1"`)
	i := strings.Index(string(b), string(needle))
	if i < 0 {
		t.Fatalf("the web pod's record is not found in the journal")
	}
	b[i+9] ^= 0x01
	if err := os.WriteFile(f.db(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	n := f.check(t, 1)
	out := n.output()
	if !strings.Contains(out, uid) || !strings.Contains(out, "JOURNAL DAMAGED") {
		t.Errorf("no error log names the damaged pod %s:\n%s", uid, tail(out, 30))
	}
}

// TestDamageFullDisk: the node's root dir is on a small tmpfs that fills up
// while a new pod arrives. Its appends fail (bbolt may still have free pages
// for the first ones): it waits, /healthz
// fails naming the journal, the running pods are untouched. Once the space
// is back, everything resumes by itself: the new pod runs once, /healthz is
// 200 again, nothing was restarted.
func TestDamageFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("ACTORLET_E2E_REQUIRE_CONTAINERD") != "" {
			t.Fatal("ACTORLET_E2E_REQUIRE_CONTAINERD is set (CI), but mounting a tmpfs needs root")
		}
		t.Skip("mounting a tmpfs needs root")
	}
	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	disk := filepath.Join(filepath.Dir(d.root), "disk")
	if err := os.MkdirAll(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=16m"); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", disk, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(disk, syscall.MNT_DETACH) })
	d.root = filepath.Join(disk, "root")
	writeManifest(t, d.manifests, "web.yaml", podManifest("web", nil))
	n := startNode(t, s.endpoint, d)
	t.Cleanup(n.stop)
	waitFor(t, "web Running", func() (bool, string) {
		p, ok := n.pods(t)["default/web-node-1"]
		return ok && p.Status.Phase == corev1.PodRunning, "not yet"
	})
	before, err := s.client.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	fill := filepath.Join(disk, "fill")
	fillDisk(t, fill)
	writeManifest(t, d.manifests, "late.yaml", podManifest("late", nil))
	waitFor(t, "/healthz failing and naming the journal", func() (bool, string) {
		code, body := healthz(t, n)
		return code == http.StatusInternalServerError && strings.Contains(body, "journal"), fmt.Sprintf("%d %s", code, body)
	})

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "late Running once the space is back", func() (bool, string) {
		p, ok := n.pods(t)["default/late-node-1"]
		return ok && p.Status.Phase == corev1.PodRunning, fmt.Sprint(p.Status.Phase)
	})
	waitFor(t, "/healthz 200 again", func() (bool, string) {
		code, body := healthz(t, n)
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	after, err := s.client.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for uid, v := range before {
		if got, want := ids(after[uid]), ids(v); !slices.Equal(got, want) {
			t.Errorf("pod %s: runtime objects %v after the full disk, before %v", uid, got, want)
		}
	}
	late := n.pods(t)["default/late-node-1"]
	if v := after[string(late.UID)]; v == nil || len(v.Sandboxes) != 1 || len(v.Containers) != 1 {
		t.Errorf("late pod in the runtime: %+v, want one sandbox and one container", v)
	}
	if v := s.violations(t); len(v) > 0 {
		t.Errorf("CRI misuse: %v", v)
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// healthz returns the node's /healthz status code and body.
func healthz(t *testing.T, n *node) (int, string) {
	t.Helper()
	resp, err := http.Get(n.url + "/healthz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
