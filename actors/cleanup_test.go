package actors

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/podspec"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// dirVolumes are pod volumes in a temporary directory: SetUp makes the
// pod's directory with one directory per volume, TearDown removes the
// pod's directory (gone already is fine) and counts its calls by pod; the
// first failTearDowns calls fail.
type dirVolumes struct {
	root          string
	mu            sync.Mutex
	failTearDowns int
	tearDowns     map[string]int
}

var errTearDown = errors.New("injected: device or resource busy")

func (v *dirVolumes) SetUp(_ context.Context, pod *corev1.Pod) (map[string]string, error) {
	paths := map[string]string{}
	for _, vol := range pod.Spec.Volumes {
		p := filepath.Join(v.PodDir(string(pod.UID)), "volumes", vol.Name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, err
		}
		paths[vol.Name] = p
	}
	return paths, nil
}

func (v *dirVolumes) TearDown(_ context.Context, uid string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tearDowns[uid]++
	if v.failTearDowns > 0 {
		v.failTearDowns--
		return errTearDown
	}
	return os.RemoveAll(v.PodDir(uid))
}

func (v *dirVolumes) PodDir(uid string) string { return filepath.Join(v.root, uid) }

func (v *dirVolumes) calls(uid string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.tearDowns[uid]
}

// cleanUpEnv is a node for the clean-up tests: the simulated runtime, an
// in-memory journal, volumes and pod logs in temporary directories.
type cleanUpEnv struct {
	t      *testing.T
	client *cri.Client
	j      *memJournal
	vols   *dirVolumes
	deps   Deps
	pod    *corev1.Pod
}

func newCleanUpEnv(t *testing.T) *cleanUpEnv {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	vols := &dirVolumes{root: t.TempDir(), tearDowns: map[string]int{}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{
			Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	return &cleanUpEnv{t: t, client: client, j: j, vols: vols, pod: pod, deps: Deps{
		Journal: j, Runtime: client, Lister: CRILister{Client: client}, Volumes: vols,
		PodConfig: podspec.Options{PodLogsDir: t.TempDir()}, Logger: zaptest.NewLogger(t),
		RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond}}
}

func (e *cleanUpEnv) logDir() string { return podspec.PodLogDir(e.deps.PodConfig.PodLogsDir, e.pod) }

// events are the kinds of pod uid's journaled events, in order.
func (e *cleanUpEnv) events() []string {
	e.j.mu.Lock()
	defer e.j.mu.Unlock()
	var out []string
	for _, env := range e.j.streams[string(e.pod.UID)] {
		out = append(out, env.GetEvent().Name())
	}
	return out
}

// active reports whether the Supervisor sup still has an actor for the pod.
func (e *cleanUpEnv) active(system *actor.ActorSystem, sup *actor.PID) bool {
	res, err := system.Root.RequestFuture(sup, &ActivePods{}, 5*time.Second).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return slices.Contains(res.([]string), string(e.pod.UID))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestPodCleanUpIsAnEffect: a removed pod's volumes and log directory are
// removed by the core's CleanUpPod effect, after PodRemoved; a failed
// tear-down is retried with back-off, and the pod is done (its actor
// forgotten) only once PodCleanedUp is journaled, once.
func TestPodCleanUpIsAnEffect(t *testing.T) {
	e := newCleanUpEnv(t)
	e.vols.failTearDowns = 1
	st := &statusLog{last: map[string]PodUpdate{}}
	e.deps.Status = st
	system, sup := startSupervisor(t, e.deps, e.j)
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{e.pod}})
	waitUntil(t, "pod Running", func() bool {
		p, _ := phaseOf(st, "uid-p")
		return p == corev1.PodRunning
	})
	if !exists(e.logDir()) || !exists(e.vols.PodDir("uid-p")) {
		t.Fatalf("the running pod has no log directory (%v) or pod directory (%v)", exists(e.logDir()), exists(e.vols.PodDir("uid-p")))
	}

	system.Root.Send(sup, &SourceSnapshot{Source: "test"})
	waitUntil(t, "the pod's actor gone", func() bool { return !e.active(system, sup) })
	if exists(e.logDir()) || exists(e.vols.PodDir("uid-p")) {
		t.Errorf("after the pod: log directory left %v, pod directory left %v", exists(e.logDir()), exists(e.vols.PodDir("uid-p")))
	}
	if n := e.vols.calls("uid-p"); n != 2 {
		t.Errorf("TearDown called %d times, want 2 (a failure, then its retry)", n)
	}
	evs := e.events()
	removed, cleaned := slices.Index(evs, "PodRemoved"), slices.Index(evs, "PodCleanedUp")
	if removed < 0 || cleaned != len(evs)-1 || cleaned < removed {
		t.Fatalf("journal %v: want PodRemoved, then PodCleanedUp last", evs)
	}
	if slices.IndexFunc(evs[cleaned+1:], func(s string) bool { return s == "PodCleanedUp" }) >= 0 {
		t.Fatalf("journal %v: PodCleanedUp twice", evs)
	}
}

// TestPodCleanUpAfterACrash: a node killed after PodRemoved but before
// PodCleanedUp was journaled carries the clean-up out on its next start
// (again: it is idempotent); once PodCleanedUp is journaled, a later start
// does not, even when an actor is spawned for the UID again (here for a
// stray sandbox of it, which is removed).
func TestPodCleanUpAfterACrash(t *testing.T) {
	e := newCleanUpEnv(t)
	st := &statusLog{last: map[string]PodUpdate{}}
	e.deps.Status = st
	system, sup := startSupervisor(t, e.deps, e.j)
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{e.pod}})
	waitUntil(t, "pod Running", func() bool {
		p, _ := phaseOf(st, "uid-p")
		return p == corev1.PodRunning
	})
	system.Root.Send(sup, &SourceSnapshot{Source: "test"})
	waitUntil(t, "the pod's actor gone", func() bool { return !e.active(system, sup) })
	stopAndWait(t, system, sup, "the first node")
	e.j.mu.Lock()
	full := slices.Clone(e.j.streams["uid-p"])
	e.j.mu.Unlock()
	if full[len(full)-1].GetEvent().GetPodCleanedUp() == nil {
		t.Fatalf("journal does not end with PodCleanedUp: %v", e.events())
	}

	// restart is the node's next start on the journal stream events, with
	// the runtime's view of the pod.
	restart := func(what string, events []*pb.Envelope) {
		t.Helper()
		e.j.mu.Lock()
		e.j.streams["uid-p"] = slices.Clone(events)
		e.j.mu.Unlock()
		s, err := e.j.load(t.Context(), "uid-p")
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.deps.Lister.ListPodObserved(t.Context(), "uid-p")
		if err != nil {
			t.Fatal(err)
		}
		rec := &Recovery{States: map[string]*lifecycle.State{"uid-p": s}, Views: map[string]*pb.RuntimeObserved{"uid-p": v},
			Sources: []SourceSnapshot{{Source: "test"}}}
		system := actor.NewActorSystem()
		t.Cleanup(system.Shutdown)
		sup, err := system.Root.SpawnNamed(NewSupervisorProps(t.Context(), e.deps, e.j.load, rec), "supervisor")
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, what+": the pod's actor gone", func() bool { return !e.active(system, sup) })
		stopAndWait(t, system, sup, what)
	}

	// Killed between PodRemoved and PodCleanedUp, with the tear-down half
	// done (the log directory is back here): the clean-up runs again.
	if err := os.MkdirAll(e.logDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	restart("killed before PodCleanedUp", full[:len(full)-1])
	if n := e.vols.calls("uid-p"); n != 2 {
		t.Errorf("TearDown called %d times in all, want 2 (again after the crash)", n)
	}
	if exists(e.logDir()) {
		t.Error("the log directory is left after the recovered clean-up")
	}
	if evs := e.events(); len(evs) != len(full) || evs[len(evs)-1] != "PodCleanedUp" {
		t.Errorf("journal after the recovered clean-up: %v", evs)
	}

	// Cleaned up: a stray sandbox of the UID brings an actor back, which
	// removes it, and cleans nothing up again.
	sb, err := e.client.RunPodSandbox(t.Context(), &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "uid-p", Attempt: 7},
		Labels:   map[string]string{cri.LabelPodUID: "uid-p", cri.LabelManaged: cri.ManagedValue}}, "")
	if err != nil {
		t.Fatal(err)
	}
	restart("after PodCleanedUp", full)
	if n := e.vols.calls("uid-p"); n != 2 {
		t.Errorf("TearDown called %d times in all, want 2: the clean-up ran again after PodCleanedUp", n)
	}
	if evs := e.events(); len(evs) != len(full) {
		t.Errorf("journal after a start on a cleaned-up pod: %v, want it unchanged", evs)
	}
	if _, err := e.client.PodSandboxStatus(t.Context(), sb); cri.KindOf(err) != cri.NotFound {
		t.Errorf("the stray sandbox: %v, want it removed", err)
	}
}
