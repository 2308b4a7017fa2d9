package actors

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/actorlet/actorlet/cri/sim"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

var errGone = errors.New("journal gone")

func TestSupervisionDirectives(t *testing.T) {
	var fatal error
	d := &Deps{Fatal: func(err error) bool { return errors.Is(err, errGone) }, OnFatal: func(err error) { fatal = err }}
	d.withDefaults()
	cases := []struct {
		reason any
		want   actor.Directive
	}{
		{&JournalError{PodUID: "a", Err: errors.New("disk full")}, actor.RestartDirective},
		{&JournalError{PodUID: "a", Err: fmt.Errorf("append: %w", errGone)}, actor.StopDirective},
		{"some panic", actor.RestartDirective},
	}
	for _, c := range cases {
		if got := decide(d, d.Logger, c.reason); got != c.want {
			t.Errorf("decide(%v) = %v, want %v", c.reason, got, c.want)
		}
	}
	if !errors.Is(fatal, errGone) {
		t.Fatalf("OnFatal got %v, want the journal error", fatal)
	}
}

// memJournal is an in-memory journal whose appends can be made to fail.
type memJournal struct {
	mu      sync.Mutex
	streams map[string][]*pb.Envelope
	failAt  int // the failAt-th append fails (1-based); 0: none
	appends int
	down    bool // every append fails (a full disk)
}

func (j *memJournal) Append(_ context.Context, uid string, evs ...*pb.Envelope) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appends++
	if j.appends == j.failAt || j.down {
		return errors.New("injected append failure")
	}
	s := j.streams[uid]
	for _, e := range evs {
		if want := uint64(len(s) + 1); e.Seq != want {
			return fmt.Errorf("pod %s: seq %d, want %d", uid, e.Seq, want)
		}
		s = append(s, e)
	}
	j.streams[uid] = s
	return nil
}

func (j *memJournal) SaveSnapshot(context.Context, *pb.Snapshot) error { return nil }

func (j *memJournal) load(_ context.Context, uid string) (*lifecycle.State, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Restore(uid, nil, j.streams[uid])
}

type statusLog struct {
	mu    sync.Mutex
	last  map[string]PodUpdate
	first map[string]PodUpdate // the first update of each pod
}

func (s *statusLog) PodStatus(u PodUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[u.UID] = u
	if s.first == nil {
		s.first = map[string]PodUpdate{}
	}
	if _, ok := s.first[u.UID]; !ok {
		s.first[u.UID] = u
	}
}

func (s *statusLog) get(uid string) (PodUpdate, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.last[uid]
	return u, ok
}

// TestFailedAppendRestartsFromDisk: a PodActor whose append fails drops
// that decision, waits, decides its commands again, asks the Supervisor for
// its pod and lists the runtime again, and carries on; nothing is done
// twice in the runtime.
func TestFailedAppendRestartsFromDisk(t *testing.T) {
	for failAt := 1; failAt <= 5; failAt++ { // reaching Running takes 5 appends
		t.Run(fmt.Sprintf("append-%d-fails", failAt), func(t *testing.T) {
			rt, client := newSim(t)
			j := &memJournal{streams: map[string][]*pb.Envelope{}, failAt: failAt}
			st := &statusLog{last: map[string]PodUpdate{}}
			system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st, Logger: zaptest.NewLogger(t)}, j)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
			system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})

			deadline := time.Now().Add(20 * time.Second)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				u, ok := st.get("uid-p")
				if ok && u.Status != nil && u.Status.Phase == corev1.PodRunning && u.Status.ContainerStatuses[0].State.Running != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("pod not Running after the failed append: %+v", u)
				}
				<-tick.C
			}
			j.mu.Lock()
			appends := j.appends
			j.mu.Unlock()
			if appends <= failAt {
				t.Fatalf("only %d appends: the injected failure of append %d never happened", appends, failAt)
			}
			replayed, err := j.load(context.Background(), "uid-p")
			if err != nil {
				t.Fatal(err)
			}
			if got := lifecycle.Phase(replayed, time.Now()); got != corev1.PodRunning {
				t.Fatalf("journal replays to phase %s", got)
			}
			if v := rt.Info().Violations; len(v) > 0 {
				t.Fatalf("CRI misuse: %v", v)
			}
			if info := rt.Info(); info.Sandboxes != 1 || info.Containers != 1 {
				t.Fatalf("runtime holds %d sandboxes, %d containers", info.Sandboxes, info.Containers)
			}
		})
	}
}

// failingStops fails the first n StopContainer calls with a definitive error.
type failingStops struct {
	Runtime
	mu    sync.Mutex
	fails int
	calls int
}

func (f *failingStops) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.fails
	f.mu.Unlock()
	if fail {
		return &cri.Error{Op: "StopContainer", ID: id, Kind: cri.FailedPrecondition, Err: errors.New("injected")}
	}
	return f.Runtime.StopContainer(ctx, id, grace)
}

// TestFailedEffectBacksOff: an effect that keeps failing is tried again after
// a back-off, not in a loop, and the pod goes on once it succeeds.
func TestFailedEffectBacksOff(t *testing.T) {
	_, client := newSim(t)
	stops := &failingStops{Runtime: client, fails: 3}
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: stops, Lister: CRILister{Client: client}, Status: st,
		Logger: zaptest.NewLogger(t), RetryMin: 50 * time.Millisecond, RetryMax: time.Second}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "pod Running", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Status != nil && u.Status.Phase == corev1.PodRunning
	})
	start := time.Now()
	system.Root.Send(sup, &SourceSnapshot{Source: "test"})
	waitUntil(t, "pod removed", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Removed
	})
	// The three retries waited 50, 100 and 200 ms at least: a lower bound
	// that a retry loop without back-off cannot meet.
	if took := time.Since(start); took < 350*time.Millisecond {
		t.Fatalf("removal took %s: the failed stops were retried without back-off", took)
	}
	stops.mu.Lock()
	defer stops.mu.Unlock()
	if stops.calls != 4 {
		t.Fatalf("StopContainer called %d times for 3 failures and a success", stops.calls)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// newSim serves a simulated runtime in process for the test.
func newSim(t *testing.T) (*sim.Runtime, *cri.Client) {
	t.Helper()
	rt, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return rt, cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second})
}

// startSupervisor runs a Supervisor with nothing recovered.
func startSupervisor(t *testing.T, deps Deps, j *memJournal) (*actor.ActorSystem, *actor.PID) {
	t.Helper()
	system := startSupervisorWith(t, deps, j.load)
	return system, supervisorPID(system)
}

// startSupervisorWith runs a Supervisor with nothing recovered that loads
// pods with load.
func startSupervisorWith(t *testing.T, deps Deps, load Loader) *actor.ActorSystem {
	t.Helper()
	system := actor.NewActorSystem()
	t.Cleanup(system.Shutdown)
	if _, err := system.Root.SpawnNamed(NewSupervisorProps(t.Context(), deps, load, &Recovery{}), "supervisor"); err != nil {
		t.Fatal(err)
	}
	return system
}

// supervisorPID is the PID of the Supervisor startSupervisorWith spawned.
func supervisorPID(system *actor.ActorSystem) *actor.PID {
	return system.NewLocalPID("supervisor")
}

// lostReplies wraps a Runtime: when lose is set, the first RunPodSandbox
// and the first CreateContainer happen in the runtime but report a timeout,
// as a reply lost on the way. It counts the List calls made to look for
// earlier tries.
type lostReplies struct {
	Runtime
	lose bool

	mu                    sync.Mutex
	lostSandbox, lostCtr  bool
	sandboxLists, ctrList int
}

func (l *lostReplies) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	id, err := l.Runtime.RunPodSandbox(ctx, cfg, handler)
	if err == nil {
		err = l.loseFirst(&l.lostSandbox, "RunPodSandbox")
	}
	return id, err
}

func (l *lostReplies) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	id, err := l.Runtime.CreateContainer(ctx, sandboxID, cfg, sbCfg)
	if err == nil {
		err = l.loseFirst(&l.lostCtr, "CreateContainer")
	}
	return id, err
}

// loseFirst turns the first successful reply of op into a timeout, when lose is set.
func (l *lostReplies) loseFirst(lost *bool, op string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lose || *lost {
		return nil
	}
	*lost = true
	return &cri.Error{Op: op, Kind: cri.Timeout, Err: errors.New("injected: reply lost")}
}

func (l *lostReplies) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	l.mu.Lock()
	l.sandboxLists++
	l.mu.Unlock()
	return l.Runtime.ListPodSandbox(ctx, f)
}

func (l *lostReplies) ListContainers(ctx context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	l.mu.Lock()
	l.ctrList++
	l.mu.Unlock()
	return l.Runtime.ListContainers(ctx, f)
}

// TestCreationsLookBeforeRetrying: a sandbox or container this process just
// journaled is created without a look at the runtime first, but a retry
// (the reply of the first try lost) looks first and adopts what the first
// try made, instead of making a second one.
func TestCreationsLookBeforeRetrying(t *testing.T) {
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprintf("lose=%v", lose), func(t *testing.T) {
			rt, client := newSim(t)
			wrapped := &lostReplies{Runtime: client, lose: lose}
			j := &memJournal{streams: map[string][]*pb.Envelope{}}
			st := &statusLog{last: map[string]PodUpdate{}}
			system, sup := startSupervisor(t, Deps{Journal: j, Runtime: wrapped, Lister: CRILister{Client: client}, Status: st,
				Logger: zaptest.NewLogger(t), RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond}, j)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
			system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
			waitUntil(t, "pod Running", func() bool {
				u, ok := st.get("uid-p")
				return ok && u.Status != nil && u.Status.Phase == corev1.PodRunning
			})
			if info := rt.Info(); info.Sandboxes != 1 || info.Containers != 1 || len(info.Violations) > 0 {
				t.Fatalf("runtime holds %d sandboxes, %d containers; violations %v", info.Sandboxes, info.Containers, info.Violations)
			}
			wrapped.mu.Lock()
			defer wrapped.mu.Unlock()
			want := 0
			if lose {
				want = 1 // the retry's look
			}
			if wrapped.sandboxLists != want || wrapped.ctrList != want {
				t.Fatalf("looked for sandboxes %d and containers %d times, want %d each", wrapped.sandboxLists, wrapped.ctrList, want)
			}
		})
	}
}
