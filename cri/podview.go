package cri

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodView is what the runtime runs for one pod, as seen by one List + Status round: every
// sandbox and container labelled LabelManaged=true and LabelPodUID=UID, live or dead.
//
// A view is a snapshot, never partial: if any call of the round fails (other than NotFound for
// an object removed meanwhile, which is dropped) no view is returned at all, so a missing
// container in a view means the runtime does not have it. A view with no sandboxes and no
// containers means the pod has nothing in the runtime. Views are read-only once returned.
type PodView struct {
	UID, Name, Namespace string
	// Sandboxes and Containers are sorted by CreatedAt, then ID (oldest first).
	Sandboxes  []Sandbox
	Containers []Container
	// ListedAt is when the listing started (for messages). Not part of Equal.
	ListedAt time.Time
	// Epoch is the listing's epoch (Epochs.Next, taken before its first
	// call; 0: not numbered): objects whose creation was known only later
	// may be missing from the view. Not part of Equal.
	Epoch uint64
	// Returned is the epoch current when the listing returned
	// (Epochs.Now after its last call): what the view shows is certain to
	// be in a listing that began later. Not part of Equal.
	Returned uint64
}

// Sandbox is one pod sandbox.
type Sandbox struct {
	ID string
	// Attempt is the sandbox metadata's attempt number.
	Attempt uint32
	// Ready is the CRI SANDBOX_READY state; false is SANDBOX_NOTREADY.
	Ready bool
	// IP is the primary pod IP; empty for sandboxes that are not ready or have host networking.
	IP        string
	CreatedAt time.Time
}

// ContainerState is the runtime state of a container.
type ContainerState int

const (
	// ContainerUnknown: the runtime does not know (CONTAINER_UNKNOWN) or reported a state
	// this package does not know.
	ContainerUnknown ContainerState = iota
	// ContainerCreated: created, never started.
	ContainerCreated
	// ContainerRunning: started and not exited.
	ContainerRunning
	// ContainerExited: started and exited (or failed to start); ExitCode is valid.
	ContainerExited
)

// String returns "unknown", "created", "running" or "exited".
func (s ContainerState) String() string {
	switch s {
	case ContainerCreated:
		return "created"
	case ContainerRunning:
		return "running"
	case ContainerExited:
		return "exited"
	default:
		return "unknown"
	}
}

func containerState(s runtimeapi.ContainerState) ContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return ContainerCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return ContainerRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return ContainerExited
	default:
		return ContainerUnknown
	}
}

// Container is one container, with the details of its ContainerStatus.
type Container struct {
	ID, SandboxID string
	// Name is the container metadata's name (the name in the pod spec).
	Name string
	// Attempt is the container metadata's attempt number.
	Attempt  uint32
	State    ContainerState
	ExitCode int32
	// Reason and Message explain an exit or a failed start (e.g. "OOMKilled", "Error").
	Reason, Message                  string
	CreatedAt, StartedAt, FinishedAt time.Time
	// Image is the image as requested; ImageRef is what the runtime resolved it to.
	Image, ImageRef string
	// RestartCount is the container's AnnotationRestartCount (0 if absent or malformed).
	RestartCount uint32
}

// Equal reports whether two views describe the same runtime state (times compared with
// time.Time.Equal). nil equals only nil.
func (v *PodView) Equal(o *PodView) bool {
	if v == nil || o == nil {
		return v == o
	}
	return v.UID == o.UID && v.Name == o.Name && v.Namespace == o.Namespace &&
		slices.EqualFunc(v.Sandboxes, o.Sandboxes, Sandbox.equal) &&
		slices.EqualFunc(v.Containers, o.Containers, Container.equal)
}

// Empty reports whether the view holds no sandbox and no container.
func (v *PodView) Empty() bool { return len(v.Sandboxes) == 0 && len(v.Containers) == 0 }

func (s Sandbox) equal(o Sandbox) bool {
	return s.ID == o.ID && s.Attempt == o.Attempt && s.Ready == o.Ready && s.IP == o.IP &&
		s.CreatedAt.Equal(o.CreatedAt)
}

func (c Container) equal(o Container) bool {
	return c.ID == o.ID && c.SandboxID == o.SandboxID && c.Name == o.Name && c.Attempt == o.Attempt &&
		c.State == o.State && c.ExitCode == o.ExitCode && c.Reason == o.Reason && c.Message == o.Message &&
		c.CreatedAt.Equal(o.CreatedAt) && c.StartedAt.Equal(o.StartedAt) && c.FinishedAt.Equal(o.FinishedAt) &&
		c.Image == o.Image && c.ImageRef == o.ImageRef && c.RestartCount == o.RestartCount
}

// ListPods returns the views of all pods that have actorlet-managed objects in the runtime,
// keyed by pod UID. Managed objects without a LabelPodUID are skipped.
func (c *Client) ListPods(ctx context.Context) (map[string]*PodView, error) {
	return c.listPods(ctx, "", nil)
}

// Known is what the caller already knows of objects by ID (from its journal).
type Known struct {
	Sandboxes  map[string]Sandbox
	Containers map[string]Container
}

// ListPodsKnown is ListPods that asks the runtime for the status of an object only when known
// does not already describe it in the state the listing shows: a sandbox known with the same
// readiness, a container known in the same state, is taken from known as it is. On a node
// restart this turns one status call per object into none for the objects whose state did not
// change while the node was down.
func (c *Client) ListPodsKnown(ctx context.Context, known *Known) (map[string]*PodView, error) {
	if known == nil {
		return c.ListPods(ctx)
	}
	cache := &statusCache{sandboxes: map[string]*Sandbox{}, containers: map[string]*Container{}}
	for id, sb := range known.Sandboxes {
		cache.sandboxes[id] = &sb
	}
	for id, ct := range known.Containers {
		cache.containers[id] = &ct
	}
	return c.listPods(ctx, "", cache)
}

// ListPod returns the view of one pod. A pod with nothing in the runtime gets an empty view
// with only UID set (not an error).
func (c *Client) ListPod(ctx context.Context, podUID string) (*PodView, error) {
	start := c.clock.Now()
	pods, err := c.listPods(ctx, podUID, nil)
	if err != nil {
		return nil, err
	}
	if v := pods[podUID]; v != nil {
		return v, nil
	}
	return &PodView{UID: podUID, ListedAt: start}, nil
}

// statusCache holds the objects of earlier views. An object listed again with the same ID and
// state cannot have changed the fields only its Status call gives (IP of a ready sandbox;
// times, exit code and reason of a created, running or exited container), so its Status call
// is skipped. Containers in unknown state are always asked again.
type statusCache struct {
	sandboxes  map[string]*Sandbox
	containers map[string]*Container
}

func newStatusCache(views map[string]*PodView) *statusCache {
	sc := &statusCache{sandboxes: map[string]*Sandbox{}, containers: map[string]*Container{}}
	for _, v := range views {
		for i := range v.Sandboxes {
			sc.sandboxes[v.Sandboxes[i].ID] = &v.Sandboxes[i]
		}
		for i := range v.Containers {
			sc.containers[v.Containers[i].ID] = &v.Containers[i]
		}
	}
	return sc
}

func (sc *statusCache) sandbox(id string, ready bool) (Sandbox, bool) {
	if sc == nil {
		return Sandbox{}, false
	}
	s, ok := sc.sandboxes[id]
	if !ok || s.Ready != ready {
		return Sandbox{}, false
	}
	return *s, true
}

func (sc *statusCache) container(id string, state ContainerState) (Container, bool) {
	if sc == nil || state == ContainerUnknown {
		return Container{}, false
	}
	c, ok := sc.containers[id]
	if !ok || c.State != state {
		return Container{}, false
	}
	return *c, true
}

// listPods lists the managed objects (of one pod when podUID is set) and completes them with
// Status calls, skipping those the cache answers.
func (c *Client) listPods(ctx context.Context, podUID string, cache *statusCache) (map[string]*PodView, error) {
	start := c.clock.Now()
	sel := managedSelector(podUID)
	sandboxes, err := c.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	containers, err := c.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	pods := map[string]*PodView{}
	pod := func(labels map[string]string) *PodView {
		// Runtimes apply the selector, but a runtime that ignores it must not make other
		// tenants' objects ours.
		uid := labels[LabelPodUID]
		if !isManaged(labels) || uid == "" || (podUID != "" && uid != podUID) {
			return nil
		}
		v := pods[uid]
		if v == nil {
			v = &PodView{UID: uid, ListedAt: start}
			pods[uid] = v
		}
		if v.Name == "" {
			v.Name, v.Namespace = labels[LabelPodName], labels[LabelPodNamespace]
		}
		return v
	}
	// The Status calls go out Options.StatusConcurrency at a time: a node
	// that lost its journal asks for every object it runs. Sandboxes first:
	// a runtime that answers PodSandboxStatus with the statuses of the
	// sandbox's containers (the CRI's containers_statuses, filled for the
	// kubelet's evented PLEG) answers those containers' ContainerStatus
	// calls too, and they are not made.
	sbs, sbOK := make([]Sandbox, len(sandboxes)), make([]bool, len(sandboxes))
	cts, ctOK := make([]Container, len(containers)), make([]bool, len(containers))
	sbContainers := make([][]*runtimeapi.ContainerStatus, len(sandboxes))
	var calls []func(ctx context.Context) error
	for i, ps := range sandboxes {
		if pod(ps.GetLabels()) == nil {
			continue
		}
		ready := ps.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
		if s, ok := cache.sandbox(ps.GetId(), ready); ok {
			sbs[i], sbOK[i] = s, true
			continue
		}
		if !ready {
			// The listing has all a sandbox that is not ready shows.
			sbs[i], sbOK[i] = listedSandbox(ps), true
			continue
		}
		calls = append(calls, func(ctx context.Context) (err error) {
			sbs[i], sbOK[i], sbContainers[i], err = c.sandbox(ctx, ps)
			return err
		})
	}
	if err := c.callAll(ctx, calls); err != nil {
		return nil, err
	}
	var given map[string]*runtimeapi.ContainerStatus // by container ID
	for i := range sandboxes {
		for _, st := range sbContainers[i] {
			if st.GetId() == "" {
				continue
			}
			if given == nil {
				given = map[string]*runtimeapi.ContainerStatus{}
			}
			given[st.GetId()] = st
		}
	}
	calls = calls[:0]
	for i, pc := range containers {
		if pod(pc.GetLabels()) == nil {
			continue
		}
		if ct, ok := cache.container(pc.GetId(), containerState(pc.GetState())); ok {
			cts[i], ctOK[i] = ct, true
			continue
		}
		if st, ok := given[pc.GetId()]; ok {
			cts[i], ctOK[i] = listedContainer(pc, st), true
			continue
		}
		calls = append(calls, func(ctx context.Context) (err error) {
			cts[i], ctOK[i], err = c.container(ctx, pc)
			return err
		})
	}
	if err := c.callAll(ctx, calls); err != nil {
		return nil, err
	}
	for i, ps := range sandboxes {
		if sbOK[i] {
			v := pods[ps.GetLabels()[LabelPodUID]]
			v.Sandboxes = append(v.Sandboxes, sbs[i])
		}
	}
	for i, pc := range containers {
		if ctOK[i] {
			v := pods[pc.GetLabels()[LabelPodUID]]
			v.Containers = append(v.Containers, cts[i])
		}
	}
	for uid, v := range pods {
		if v.Empty() {
			delete(pods, uid) // every object vanished between List and Status
			continue
		}
		slices.SortFunc(v.Sandboxes, func(a, b Sandbox) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
		slices.SortFunc(v.Containers, func(a, b Container) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
	}
	return pods, nil
}

// sandbox converts a listed ready sandbox, asking PodSandboxStatus for its IP. It also
// returns the statuses of the sandbox's containers, if the runtime gave them with the
// sandbox's. ok is false when the sandbox vanished meanwhile.
func (c *Client) sandbox(ctx context.Context, ps *runtimeapi.PodSandbox) (Sandbox, bool, []*runtimeapi.ContainerStatus, error) {
	s := listedSandbox(ps)
	resp, err := c.podSandboxStatus(ctx, ps.GetId())
	switch {
	case KindOf(err) == NotFound:
		return Sandbox{}, false, nil, nil
	case err != nil:
		return Sandbox{}, false, nil, err
	}
	st := resp.GetStatus()
	s.Ready = st.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	if s.Ready {
		s.IP = st.GetNetwork().GetIp()
	}
	return s, true, resp.GetContainersStatuses(), nil
}

// listedSandbox is what the listing says of a sandbox (no IP).
func listedSandbox(ps *runtimeapi.PodSandbox) Sandbox {
	return Sandbox{
		ID:        ps.GetId(),
		Attempt:   ps.GetMetadata().GetAttempt(),
		Ready:     ps.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: nanoTime(ps.GetCreatedAt()),
	}
}

// callAll runs calls, Options.StatusConcurrency at a time, and returns the
// first error (the calls not started by then are not made). The calls run
// on that many worker goroutines, not one goroutine each: a listing of
// 10,000 objects would otherwise start (and grow the stacks of) 10,000
// goroutines. With StatusConcurrency 1 they run one after the other on the
// caller's goroutine (a runtime that must be called from one goroutine, as
// the simulation's).
func (c *Client) callAll(ctx context.Context, calls []func(ctx context.Context) error) error {
	if c.statusConcurrency == 1 || len(calls) <= 1 {
		for _, call := range calls {
			if err := call(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(c.statusConcurrency, len(calls)) {
		g.Go(func() error {
			for gctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(calls) {
					return nil
				}
				if err := calls[i](gctx); err != nil {
					return err
				}
			}
			return gctx.Err()
		})
	}
	return g.Wait()
}

// container converts a listed container, completing it from ContainerStatus.
// ok is false when the container vanished meanwhile.
func (c *Client) container(ctx context.Context, pc *runtimeapi.Container) (Container, bool, error) {
	st, err := c.ContainerStatus(ctx, pc.GetId())
	switch {
	case KindOf(err) == NotFound:
		return Container{}, false, nil
	case err != nil:
		return Container{}, false, err
	}
	return listedContainer(pc, st), true, nil
}

// listedContainer is a listed container completed from its status (from
// ContainerStatus, or given with its sandbox's).
func listedContainer(pc *runtimeapi.Container, st *runtimeapi.ContainerStatus) Container {
	name := st.GetMetadata().GetName()
	if name == "" {
		name = pc.GetMetadata().GetName()
	}
	if name == "" {
		name = pc.GetLabels()[LabelContainerName]
	}
	image := st.GetImage().GetImage()
	if image == "" {
		image = pc.GetImage().GetImage()
	}
	imageRef := st.GetImageRef()
	if imageRef == "" {
		imageRef = pc.GetImageRef()
	}
	return Container{
		ID:           pc.GetId(),
		SandboxID:    pc.GetPodSandboxId(),
		Name:         name,
		Attempt:      pc.GetMetadata().GetAttempt(),
		State:        containerState(st.GetState()), // fresher than the listing
		ExitCode:     st.GetExitCode(),
		Reason:       st.GetReason(),
		Message:      TerminationMessage(st),
		CreatedAt:    nanoTime(cmp.Or(st.GetCreatedAt(), pc.GetCreatedAt())),
		StartedAt:    nanoTime(st.GetStartedAt()),
		FinishedAt:   nanoTime(st.GetFinishedAt()),
		Image:        image,
		ImageRef:     imageRef,
		RestartCount: restartCount(cmp.Or(st.GetAnnotations()[AnnotationRestartCount], pc.GetAnnotations()[AnnotationRestartCount])),
	}
}

// nanoTime converts CRI nanoseconds since the epoch; 0 is the zero time.
func nanoTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// restartCount parses an AnnotationRestartCount value; absent or malformed is 0.
func restartCount(v string) uint32 {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}
