package actors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

type rebuildLog struct {
	mu     sync.Mutex
	damage map[string]string
}

func (r *rebuildLog) Rebuilt(pod *corev1.Pod, damage string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.damage[string(pod.UID)] = damage
}

func (r *rebuildLog) get(uid string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.damage[uid]
	return d, ok
}

// TestLostJournalAdoptsRunningPod: a node whose journal is lost while its
// pod runs starts again on an empty journal. The pod is rebuilt from the
// runtime: its container keeps its ID (nothing stopped or created), its
// restart count is kept, the rebuild is reported, and the rebuilt state is
// journaled. The first status the rebuilt pod publishes is the adopted one:
// the source's wish and the runtime's view are decided and journaled
// together, so no Pending status comes first.
func TestLostJournalAdoptsRunningPod(t *testing.T) {
	_, client := newSim(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}

	j1 := &memJournal{streams: map[string][]*pb.Envelope{}}
	st1 := &statusLog{last: map[string]PodUpdate{}}
	system1, sup1 := startSupervisor(t, Deps{Journal: j1, Runtime: client, Lister: CRILister{Client: client}, Status: st1, Logger: zaptest.NewLogger(t)}, j1)
	system1.Root.Send(sup1, &SourceSnapshot{Source: "file", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "the pod running", func() bool {
		u, ok := st1.get("uid-web")
		return ok && u.Status != nil && len(u.Status.ContainerStatuses) == 1 && u.Status.ContainerStatuses[0].State.Running != nil
	})
	u, _ := st1.get("uid-web")
	wantID := u.Status.ContainerStatuses[0].ContainerID
	if err := system1.Root.StopFuture(sup1).Wait(); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	before, err := client.ListPod(ctx, "uid-web")
	if err != nil {
		t.Fatal(err)
	}
	// The journal is lost: the node starts on an empty one.
	j2 := &memJournal{streams: map[string][]*pb.Envelope{}}
	st2 := &statusLog{last: map[string]PodUpdate{}}
	rebuilt := &rebuildLog{damage: map[string]string{}}
	rec := &Recovery{States: map[string]*lifecycle.State{}, Views: map[string]*pb.RuntimeObserved{"uid-web": Observed("uid-web", before)},
		Sources: []SourceSnapshot{{Source: "file", Pods: []*corev1.Pod{pod}}}, ListedAt: time.Now(), Lost: "the journal is empty or was missing"}
	system2 := actor.NewActorSystem()
	t.Cleanup(system2.Shutdown)
	deps := Deps{Journal: j2, Runtime: client, Lister: CRILister{Client: client}, Status: st2, Rebuilt: rebuilt, Logger: zaptest.NewLogger(t)}
	if _, err := system2.Root.SpawnNamed(NewSupervisorProps(t.Context(), deps, j2.load, rec), "supervisor"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the rebuild reported", func() bool { _, ok := rebuilt.get("uid-web"); return ok })
	if d, _ := rebuilt.get("uid-web"); d != rec.Lost {
		t.Errorf("rebuild reported damage %q, want %q", d, rec.Lost)
	}
	waitUntil(t, "the rebuilt pod running", func() bool {
		u, ok := st2.get("uid-web")
		return ok && u.Status != nil && u.Status.Phase == corev1.PodRunning && len(u.Status.ContainerStatuses) == 1 &&
			u.Status.ContainerStatuses[0].State.Running != nil
	})
	st2.mu.Lock()
	first := st2.first["uid-web"]
	st2.mu.Unlock()
	if first.Status == nil || first.Status.Phase != corev1.PodRunning || len(first.Status.ContainerStatuses) != 1 ||
		first.Status.ContainerStatuses[0].ContainerID != wantID {
		t.Errorf("first status published after the rebuild: %+v, want Running with the adopted container", first.Status)
	}
	u, _ = st2.get("uid-web")
	if got := u.Status.ContainerStatuses[0].ContainerID; got != wantID {
		t.Errorf("container ID after the rebuild = %s, want the adopted %s", got, wantID)
	}
	after, err := client.ListPod(ctx, "uid-web")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Sandboxes) != 1 || len(after.Containers) != 1 || after.Containers[0].ID != before.Containers[0].ID ||
		after.Containers[0].State != cri.ContainerRunning || after.Sandboxes[0].ID != before.Sandboxes[0].ID {
		t.Errorf("runtime after the rebuild: %+v, want the same single running sandbox and container as before: %+v", after, before)
	}
	replayed, err := j2.load(ctx, "uid-web")
	if err != nil {
		t.Fatal(err)
	}
	if r := replayed.P.Containers["app"]; r == nil || r.Id == "" || !strings.HasSuffix(wantID, r.Id) || r.Phase != pb.ContainerPhase_CONTAINER_RUNNING {
		t.Errorf("journaled state after the rebuild: %+v, want app running as %s", replayed.P.Containers["app"], wantID)
	}
}
