package actors

import (
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

type healthLog struct {
	mu      sync.Mutex
	failing map[string]bool
	ever    bool
}

func (h *healthLog) AppendFailed(uid string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing[uid], h.ever = true, true
}

func (h *healthLog) AppendSucceeded(uid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.failing, uid)
}

func (h *healthLog) state() (failing int, ever bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.failing), h.ever
}

// TestAppendFailuresWaitAndResume: while every append fails (a full disk),
// a new pod does nothing in the runtime and is reported failing; once
// appends succeed again it resumes by itself, runs exactly one sandbox and
// one container, and is reported healthy.
func TestAppendFailuresWaitAndResume(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}, down: true}
	st := &statusLog{last: map[string]PodUpdate{}}
	health := &healthLog{failing: map[string]bool{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		AppendHealth: health, Logger: zaptest.NewLogger(t)}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})

	waitUntil(t, "the failing appends reported, and retried", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		n, _ := health.state()
		return n == 1 && j.appends >= 3
	})
	if v, err := client.ListPod(t.Context(), "uid-p"); err != nil || !v.Empty() {
		t.Fatalf("the runtime was touched before anything was durable: %+v, %v", v, err)
	}
	if u, ok := st.get("uid-p"); ok && u.Status != nil {
		t.Fatalf("a status was published for a state the journal does not hold")
	}

	j.mu.Lock()
	j.down = false
	j.mu.Unlock()
	waitUntil(t, "the pod running after the disk has space again", func() bool {
		u, ok := st.get("uid-p")
		return ok && u.Status != nil && u.Status.Phase == corev1.PodRunning && u.Status.ContainerStatuses[0].State.Running != nil
	})
	waitUntil(t, "healthy again", func() bool { n, ever := health.state(); return n == 0 && ever })
	v, err := client.ListPod(t.Context(), "uid-p")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Sandboxes) != 1 || len(v.Containers) != 1 {
		t.Fatalf("runtime after the resume: %d sandboxes, %d containers, want 1 and 1", len(v.Sandboxes), len(v.Containers))
	}
}
