package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// respawnLog records RespawnSink calls.
type respawnLog struct {
	mu    sync.Mutex
	calls []string
	pods  []*corev1.Pod
}

func (r *respawnLog) Respawning(pod *corev1.Pod, uid string, _ time.Duration, _ int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, uid)
	r.pods = append(r.pods, pod)
}

func (r *respawnLog) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// A PodActor that fails more often than its restart strategy allows is
// stopped by protoactor; the Supervisor starts it again after back-off and
// the pod runs, once: it is never left unmanaged.
func TestSupervisorRespawnsAPodActorThatFailedTooOften(t *testing.T) {
	rt, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	var mu sync.Mutex
	loads := 0
	load := func(ctx context.Context, uid string) (*lifecycle.State, error) {
		mu.Lock()
		loads++
		n := loads
		mu.Unlock()
		if n <= 11 { // the first life and its 10 restarts
			return nil, errors.New("injected: cannot load")
		}
		return j.load(ctx, uid)
	}
	st := &statusLog{last: map[string]PodUpdate{}}
	resp := &respawnLog{}
	deps := Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st, Logger: zaptest.NewLogger(t),
		Respawned: resp, RespawnMin: 10 * time.Millisecond, RespawnMax: 100 * time.Millisecond}
	system := startSupervisorWith(t, deps, load)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	system.Root.Send(supervisorPID(system), &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "pod Running after its actor was respawned", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Status != nil && u.Status.Phase == corev1.PodRunning
	})
	if n := resp.count(); n != 1 {
		t.Fatalf("%d respawns reported, want 1", n)
	}
	resp.mu.Lock()
	if resp.calls[0] != "uid-p" || resp.pods[0] == nil || resp.pods[0].Name != "p" {
		t.Fatalf("respawn reported for %v %v", resp.calls, resp.pods)
	}
	resp.mu.Unlock()
	if info := rt.Info(); info.Sandboxes != 1 || info.Containers != 1 || len(info.Violations) > 0 {
		t.Fatalf("runtime holds %d sandboxes, %d containers; violations %v", info.Sandboxes, info.Containers, info.Violations)
	}
}

// A PodActor that finished is not taken for failed when its podRemoved is
// still queued behind other messages as its Terminated, a system message
// that protoactor delivers first, arrives: pods removed while the
// Supervisor is flooded are removed once, without a respawn.
func TestFinishedPodActorIsNotRespawned(t *testing.T) {
	rt, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	resp := &respawnLog{}
	deps := Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st, Logger: zaptest.NewLogger(t),
		Respawned: resp, RespawnMin: time.Millisecond, RespawnMax: 10 * time.Millisecond}
	system, sup := startSupervisor(t, deps, j)
	const n = 40
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%d", i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}})
	}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: pods})
	waitUntil(t, "every pod Running", func() bool {
		for _, p := range pods {
			if u, ok := st.get(string(p.UID)); !ok || u.Status == nil || u.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})

	// Keep the Supervisor's mailbox full of no-op messages while the pods go.
	stopFlood := make(chan struct{})
	flooded := make(chan struct{})
	go func() {
		defer close(flooded)
		for {
			select {
			case <-stopFlood:
				return
			default:
				system.Root.Send(sup, &respawnPod{uid: "none"})
			}
		}
	}()
	system.Root.Send(sup, &SourceSnapshot{Source: "test"})
	waitUntil(t, "every pod gone from the runtime and its actor stopped", func() bool {
		return rt.Info().Sandboxes == 0 && podActors(system) == 0
	})
	close(stopFlood)
	<-flooded
	for range 2 { // what the Supervisor queued to itself is handled
		if _, err := system.Root.RequestFuture(sup, &resync{uid: "none"}, 10*time.Second).Result(); err != nil {
			t.Fatal(err)
		}
	}
	if c := resp.count(); c != 0 {
		t.Fatalf("%d finished PodActors were taken for failed and respawned (first %v)", c, resp.calls[0])
	}
}

// podActors counts the Supervisor's children in system's registry.
func podActors(system *actor.ActorSystem) int {
	n := 0
	for _, m := range system.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, k := range m.Keys() {
			if strings.HasPrefix(k, "supervisor/") {
				n++
			}
		}
	}
	return n
}
