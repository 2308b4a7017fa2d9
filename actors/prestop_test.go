package actors

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// countingHooks counts the lifecycle handlers run, by container.
type countingHooks struct {
	mu  sync.Mutex
	ran map[string]int
}

func (h *countingHooks) Hook(_ context.Context, _ *corev1.Pod, c *corev1.Container, _, _ string, _ *corev1.LifecycleHandler) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ran[c.Name]++
	return nil
}

// TestPreStopOnlyOnAFreshStop: the PreStop hook runs on the first try of a
// stop its journaled intent made (fresh), never on a stop tried again or
// after a crash, so that it runs at most once per container.
func TestPreStopOnlyOnAFreshStop(t *testing.T) {
	_, client := newSim(t)
	sb, sbCfg := simSandbox(t, client)
	hooks := &countingHooks{ran: map[string]int{}}
	d := &Deps{Runtime: client, Hooks: hooks}
	d.withDefaults()
	a := &containerActor{ctx: t.Context(), uid: "uid-p", deps: d}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", Lifecycle: &corev1.Lifecycle{
			PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}}}}
	for i, fresh := range []bool{false, true, false} {
		id, err := client.CreateContainer(t.Context(), sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: uint32(i + 1)},
			Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.StartContainer(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		before := hooks.ran["app"]
		if _, err := a.run(t.Context(), &runEffect{effect: lifecycle.StopContainer{Name: "app", Attempt: uint32(i + 1), ID: id, Grace: time.Second},
			pod: pod, fresh: fresh}); err != nil {
			t.Fatal(err)
		}
		if got, want := hooks.ran["app"]-before, map[bool]int{true: 1, false: 0}[fresh]; got != want {
			t.Errorf("stop %d (fresh %v): PreStop ran %d times, want %d", i+1, fresh, got, want)
		}
	}
}
