package actors

import (
	"context"
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
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// blockingCall wraps a Runtime: the call named op blocks until its ctx is
// done, as a runtime that does not answer, and then returns the error the
// CRI client returns for a cancelled call. Every other call goes through.
type blockingCall struct {
	Runtime
	op string

	mu       sync.Mutex
	entered  int
	returned []error // ctx.Err() of each blocked call, once it returned
}

func (b *blockingCall) block(ctx context.Context, op string) error {
	b.mu.Lock()
	b.entered++
	b.mu.Unlock()
	<-ctx.Done()
	b.mu.Lock()
	b.returned = append(b.returned, ctx.Err())
	b.mu.Unlock()
	return &cri.Error{Op: op, Kind: cri.KindOf(ctx.Err()), Err: ctx.Err()}
}

func (b *blockingCall) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	if b.op == "RunPodSandbox" {
		return "", b.block(ctx, b.op)
	}
	return b.Runtime.RunPodSandbox(ctx, cfg, handler)
}

func (b *blockingCall) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if b.op == "CreateContainer" {
		return "", b.block(ctx, b.op)
	}
	return b.Runtime.CreateContainer(ctx, sandboxID, cfg, sbCfg)
}

func (b *blockingCall) state() (entered int, returned []error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entered, append([]error(nil), b.returned...)
}

// TestStopCancelsCallsInFlight: a CRI call in flight when the node stops
// (its context ends, or the Supervisor is stopped) sees its context
// cancelled and returns; the stop does not wait for the runtime. The
// cancelled call is not a failed attempt: the journal holds its intent and
// no failure, and the next start carries out the same attempt.
func TestStopCancelsCallsInFlight(t *testing.T) {
	for _, op := range []string{"RunPodSandbox", "CreateContainer"} {
		for _, how := range []string{"stop-supervisor", "cancel-node-context"} {
			t.Run(op+"/"+how, func(t *testing.T) {
				testStopCancels(t, op, how)
			})
		}
	}
}

func testStopCancels(t *testing.T, op, how string) {
	rt, client := newSim(t)
	blocking := &blockingCall{Runtime: client, op: op}
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	// The runtime's own timeout is far beyond the test's guard: only the
	// cancellation can end the blocked call.
	deps := Deps{Journal: j, Runtime: blocking, Lister: CRILister{Client: client}, Status: st, Logger: zaptest.NewLogger(t),
		RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond}
	nodeCtx, stopNode := context.WithCancel(t.Context())
	defer stopNode()
	system := actor.NewActorSystem()
	t.Cleanup(system.Shutdown)
	sup, err := system.Root.SpawnNamed(NewSupervisorProps(nodeCtx, deps, j.load, &Recovery{}), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, op+" in flight", func() bool {
		n, _ := blocking.state()
		return n == 1
	})

	if how == "cancel-node-context" {
		// The node's context ends first (Agent.Stop), while the pod's
		// actor still runs: the call returns, and the actor takes its
		// result as no outcome.
		stopNode()
		waitUntil(t, op+" returned", func() bool {
			_, ret := blocking.state()
			return len(ret) == 1
		})
	}
	stopAndWait(t, system, sup, "the blocked "+op)

	entered, returned := blocking.state()
	if entered != 1 || len(returned) != 1 || returned[0] != context.Canceled {
		t.Fatalf("%s: %d calls, returned with %v; want one, cancelled", op, entered, returned)
	}
	s, err := j.load(t.Context(), "uid-p")
	if err != nil {
		t.Fatal(err)
	}
	assertIntentNoFailure(t, j, "uid-p", op)
	if s.Done() {
		t.Fatal("the pod's state is done after the stop")
	}

	// The next start: the effect is still outstanding, and the same
	// attempt is carried out, once.
	rec := &Recovery{States: map[string]*lifecycle.State{"uid-p": s}, Views: map[string]*pb.RuntimeObserved{},
		Sources: []SourceSnapshot{{Source: "test", Pods: []*corev1.Pod{pod}}}}
	v, err := CRILister{Client: client}.ListPodObserved(t.Context(), "uid-p")
	if err != nil {
		t.Fatal(err)
	}
	rec.Views["uid-p"] = v
	deps.Runtime = client
	st2 := &statusLog{last: map[string]PodUpdate{}}
	deps.Status = st2
	system2 := actor.NewActorSystem()
	t.Cleanup(system2.Shutdown)
	sup2, err := system2.Root.SpawnNamed(NewSupervisorProps(t.Context(), deps, j.load, rec), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	// Its actors log to t: they are gone before the test ends.
	defer stopAndWait(t, system2, sup2, "the second start")
	waitUntil(t, "pod Running after the restart", func() bool {
		p, _ := phaseOf(st2, "uid-p")
		return p == corev1.PodRunning
	})
	if info := rt.Info(); info.Sandboxes != 1 || info.Containers != 1 || len(info.Violations) > 0 {
		t.Fatalf("runtime holds %d sandboxes, %d containers; violations %v", info.Sandboxes, info.Containers, info.Violations)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	sandboxes, containers := 0, 0
	for _, env := range j.streams["uid-p"] {
		switch env.GetEvent().GetKind().(type) {
		case *pb.Event_SandboxRequested:
			sandboxes++
		case *pb.Event_ContainerRequested:
			containers++
		}
	}
	if sandboxes != 1 || containers != 1 {
		t.Fatalf("journaled %d sandbox and %d container attempts, want one each (the cancelled one carried out)", sandboxes, containers)
	}
}

// assertIntentNoFailure checks that pod uid's journal holds the intent of
// the call op and no failure at all.
func assertIntentNoFailure(t *testing.T, j *memJournal, uid, op string) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	intent := false
	for _, env := range j.streams[uid] {
		switch ev := env.GetEvent().GetKind().(type) {
		case *pb.Event_SandboxRequested:
			intent = intent || op == "RunPodSandbox"
		case *pb.Event_ContainerRequested:
			intent = intent || op == "CreateContainer"
		case *pb.Event_SandboxFailed, *pb.Event_ContainerFailed, *pb.Event_ImagePullFailed, *pb.Event_HookFailed:
			t.Errorf("the cancelled %s was journaled as a failure: %v", op, ev)
		}
	}
	if !intent {
		t.Errorf("the journal of %s lacks the intent of %s: %v", uid, op, fmt.Sprint(j.streams[uid]))
	}
}

// stopAndWait stops the Supervisor sup and waits until it and its pod
// actors are gone; what names what it must not wait for.
func stopAndWait(t *testing.T, system *actor.ActorSystem, sup *actor.PID, what string) {
	t.Helper()
	// Watched before the stop: a watch that reaches a stopping actor is
	// answered Terminated at once.
	watching, gone := make(chan struct{}), make(chan struct{})
	watcher := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Watch(sup)
			close(watching)
		case *actor.Terminated:
			close(gone)
		}
	}))
	defer system.Root.Stop(watcher)
	<-watching
	system.Root.Stop(sup)
	select {
	case <-gone: // the Supervisor and its pod actors are gone
	case <-time.After(time.Minute): // a guard only: the stop must not wait for the runtime
		t.Fatalf("the supervisor's stop waits for %s", what)
	}
}

// startRecorder wraps a Runtime and records the state of each
// StartContainer's context when the call is made.
type startRecorder struct {
	Runtime
	mu     sync.Mutex
	ctxErr []error
}

func (r *startRecorder) StartContainer(ctx context.Context, id string) error {
	r.mu.Lock()
	r.ctxErr = append(r.ctxErr, ctx.Err())
	r.mu.Unlock()
	return r.Runtime.StartContainer(ctx, id)
}

// TestStartContainerOutlivesStop: a stop does not cut a StartContainer
// (containerd would leave the container EXITED with a StartError and a
// stranded task): the start runs on a context the stop does not cancel.
func TestStartContainerOutlivesStop(t *testing.T) {
	rt, client := newSim(t)
	sb, sbCfg := simSandbox(t, client)
	id, err := client.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &startRecorder{Runtime: client}
	d := &Deps{Runtime: rec}
	d.withDefaults()
	stopping, stop := context.WithCancel(t.Context())
	stop() // the pod's actor is stopping
	a := &containerActor{ctx: stopping, uid: "uid-p", deps: d}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1"}}}}
	res, err := a.run(stopping, &runEffect{effect: lifecycle.StartContainer{Name: "app", Attempt: 1, ID: id}, pod: pod})
	if err != nil || res.GetStartedAtUnixNano() == 0 {
		t.Fatalf("start: %v, result %v", err, res)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ctxErr) != 1 || rec.ctxErr[0] != nil {
		t.Fatalf("StartContainer's context: %v, want one live", rec.ctxErr)
	}
	if v := rt.Info().Violations; len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}
