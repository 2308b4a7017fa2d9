package logrotate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// fakeRuntime is an in-memory container list. ReopenContainerLog creates an empty log file at
// the container's LogPath, as a runtime does, unless reopenErr says otherwise.
type fakeRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtimeapi.Container
	statuses   map[string]*runtimeapi.ContainerStatus
	reopenErr  error
	reopens    []string // ReopenContainerLog calls, in order
	lists      int
	statusOf   map[string]int                // ContainerStatus calls, by container ID
	filters    []*runtimeapi.ContainerFilter // ListContainers filters, in order
	// ignoreFilter makes ListContainers return every container, as a runtime that does not
	// implement filtering would.
	ignoreFilter bool
	listed       chan struct{} // receives after each ListContainers, when not full
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		containers: map[string]*runtimeapi.Container{},
		statuses:   map[string]*runtimeapi.ContainerStatus{},
		listed:     make(chan struct{}, 16),
	}
}

// add adds a container writing to logPath. managed sets io.actorlet.managed=true.
func (f *fakeRuntime) add(id, logPath string, state runtimeapi.ContainerState, managed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	labels := map[string]string{cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"}
	if managed {
		labels[cri.LabelManaged] = cri.ManagedValue
	}
	f.containers[id] = &runtimeapi.Container{Id: id, State: state, Labels: labels,
		Metadata: &runtimeapi.ContainerMetadata{Name: "c-" + id}}
	f.statuses[id] = &runtimeapi.ContainerStatus{Id: id, State: state, LogPath: logPath, Labels: labels}
}

func (f *fakeRuntime) setReopenErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reopenErr = err
}

func (f *fakeRuntime) reopenCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reopens)
}

// ListContainers applies the filter's state and label selector, as a runtime does, unless
// ignoreFilter is set.
func (f *fakeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, filter)
	var out []*runtimeapi.Container
	for _, c := range f.containers {
		if f.ignoreFilter {
			out = append(out, c)
			continue
		}
		if filter.GetState() != nil && c.State != filter.GetState().GetState() {
			continue
		}
		match := true
		for k, v := range filter.GetLabelSelector() {
			if c.Labels[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, c)
		}
	}
	f.lists++
	select {
	case f.listed <- struct{}{}:
	default:
	}
	return out, nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statusOf == nil {
		f.statusOf = map[string]int{}
	}
	f.statusOf[id]++
	st, ok := f.statuses[id]
	if !ok {
		return nil, &cri.Error{Op: "ContainerStatus", ID: id, Kind: cri.NotFound, Err: errors.New("no such container")}
	}
	return st, nil
}

func (f *fakeRuntime) ReopenContainerLog(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reopens = append(f.reopens, id)
	if f.reopenErr != nil {
		return f.reopenErr
	}
	st, ok := f.statuses[id]
	if !ok {
		return &cri.Error{Op: "ReopenContainerLog", ID: id, Kind: cri.NotFound, Err: errors.New("no such container")}
	}
	lf, err := os.OpenFile(st.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	return lf.Close()
}

// writeFile writes data to path, failing the test on error.
func writeFile(t *testing.T, path string, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// logDir returns a fresh directory and the path of a container log "0.log" in it.
func logDir(t *testing.T) (dir, log string) {
	dir = t.TempDir()
	return dir, filepath.Join(dir, "0.log")
}

// statusCalls is how many times ContainerStatus was called for id.
func (f *fakeRuntime) statusCalls(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statusOf[id]
}

// remove takes container id out of the runtime.
func (f *fakeRuntime) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.containers, id)
	delete(f.statuses, id)
}
