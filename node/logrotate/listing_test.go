package logrotate

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// freshRuntime lists n running managed containers as new messages each
// time, as a runtime's replies are, and counts the listed messages the GC
// has collected; its ContainerStatus waits for release.
type freshRuntime struct {
	n         int
	logPath   string
	collected atomic.Int64
	inStatus  chan struct{}
	release   chan struct{}
}

func (f *freshRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	out := make([]*runtimeapi.Container, f.n)
	for i := range out {
		out[i] = &runtimeapi.Container{Id: fmt.Sprintf("c%d", i), State: running,
			Labels:      map[string]string{cri.LabelManaged: cri.ManagedValue, cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"},
			Annotations: map[string]string{"a": "b"},
			Metadata:    &runtimeapi.ContainerMetadata{Name: "c"}}
		runtime.SetFinalizer(out[i], func(*runtimeapi.Container) { f.collected.Add(1) })
	}
	return out, nil
}

func (f *freshRuntime) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	select {
	case f.inStatus <- struct{}{}:
	default:
	}
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &runtimeapi.ContainerStatus{Id: id, State: running, LogPath: f.logPath}, nil
}

func (f *freshRuntime) ReopenContainerLog(context.Context, string) error { return nil }

// A pass keeps what it needs of each listed container, not the listing:
// while its workers are busy (here: in their first ContainerStatus call),
// every listed message can be collected.
func TestRotateOnceLetsTheListingGo(t *testing.T) {
	_, log := logDir(t)
	writeFile(t, log, "0")
	f := &freshRuntime{n: 20, logPath: log, inStatus: make(chan struct{}, 1), release: make(chan struct{})}
	m, err := New(f, testPolicy())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.RotateOnce(ctx) }()
	select {
	case <-f.inStatus:
	case <-ctx.Done():
		t.Fatal("the pass never asked for a container's status")
	}
	for f.collected.Load() < int64(f.n) && ctx.Err() == nil {
		runtime.GC() // finalizers run after the GC that finds their object unreachable
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	got := f.collected.Load()
	close(f.release)
	err = <-done
	if got < int64(f.n) {
		t.Fatalf("during the pass %d of the %d listed containers were collected; the pass kept the rest", got, f.n)
	}
	if err != nil {
		t.Fatalf("RotateOnce: %v", err)
	}
}
