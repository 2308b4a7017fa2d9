package imagegc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const testMountpoint = "/var/lib/fake/images"

// fakeRuntime is an in-memory image store and container list. Used bytes are
// the sum of the images' sizes.
type fakeRuntime struct {
	mu         sync.Mutex
	images     map[string]*runtimeapi.Image
	containers map[string]*runtimeapi.Container
	removeErr  map[string]error // by image ID
	fsInfoErr  error
	removes    []string // RemoveImage calls, in order
	listed     chan struct{}
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		images:     map[string]*runtimeapi.Image{},
		containers: map[string]*runtimeapi.Container{},
		removeErr:  map[string]error{},
		listed:     make(chan struct{}, 16),
	}
}

func (f *fakeRuntime) addImage(id string, size uint64, tags ...string) *runtimeapi.Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := &runtimeapi.Image{Id: id, Size: size, RepoTags: tags}
	f.images[id] = img
	return img
}

// run adds a container whose image is given by ref (set as Image.Image and,
// if it is an ID, ImageRef).
func (f *fakeRuntime) run(id, ref string, state runtimeapi.ContainerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &runtimeapi.Container{Id: id, Image: &runtimeapi.ImageSpec{Image: ref}, State: state}
	if strings.HasPrefix(ref, "sha256:") {
		c.ImageRef = ref
	}
	f.containers[id] = c
}

func (f *fakeRuntime) removeContainer(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.containers, id)
}

func (f *fakeRuntime) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.images[id]
	return ok
}

func (f *fakeRuntime) removeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.removes)
}

func (f *fakeRuntime) ListImages(ctx context.Context, _ *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Image
	for _, img := range f.images {
		out = append(out, img)
	}
	select {
	case f.listed <- struct{}{}:
	default:
	}
	return out, nil
}

func (f *fakeRuntime) RemoveImage(ctx context.Context, spec *runtimeapi.ImageSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := spec.GetImage()
	f.removes = append(f.removes, id)
	if err := f.removeErr[id]; err != nil {
		return err
	}
	delete(f.images, id)
	return nil
}

func (f *fakeRuntime) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fsInfoErr != nil {
		return nil, f.fsInfoErr
	}
	var used uint64
	for _, img := range f.images {
		used += img.Size
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		FsId:      &runtimeapi.FilesystemIdentifier{Mountpoint: testMountpoint},
		UsedBytes: &runtimeapi.UInt64Value{Value: used},
	}}}, nil
}

func (f *fakeRuntime) ListContainers(ctx context.Context, _ *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range f.containers {
		out = append(out, c)
	}
	return out, nil
}

// fakeDisk is a CapacityFunc with a settable capacity.
type fakeDisk struct {
	mu       sync.Mutex
	capacity uint64
}

func (d *fakeDisk) set(c uint64) { d.mu.Lock(); d.capacity = c; d.mu.Unlock() }

func (d *fakeDisk) capacityOf(ctx context.Context, mountpoint string) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if mountpoint != testMountpoint {
		return 0, errors.New("unknown mountpoint " + mountpoint)
	}
	return d.capacity, nil
}

// eventLog records events as "Type/Reason: message".
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) record(typ, reason, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, typ+"/"+reason+": "+msg)
}

func (e *eventLog) reasons() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.events {
		r, _, _ := strings.Cut(ev, ":")
		out = append(out, r)
	}
	return out
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// harness is a Manager on a fake runtime, disk and clock.
type harness struct {
	rt      *fakeRuntime
	disk    *fakeDisk
	clock   *clocktesting.FakeClock
	events  *eventLog
	removed []Removal
	m       *Manager
}

func newHarness(t *testing.T, p Policy, opts ...Option) *harness {
	t.Helper()
	h := &harness{rt: newFakeRuntime(), disk: &fakeDisk{capacity: 1000}, clock: clocktesting.NewFakeClock(t0), events: &eventLog{}}
	opts = append([]Option{WithClock(h.clock), WithCapacity(h.disk.capacityOf), WithEvents(h.events.record),
		WithOnRemove(func(r Removal) { h.removed = append(h.removed, r) })}, opts...)
	m, err := New(h.rt, p, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	return h
}

func (h *harness) collect(t *testing.T) (Result, error) {
	t.Helper()
	return h.m.GarbageCollect(context.Background())
}

func ids(rs []Removal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
