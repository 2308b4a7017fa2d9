package cri

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime is a hand-written in-memory CRI runtime and image service. Like containerd 1.6
// it answers NotFound to Stop/Remove of unknown IDs. It counts calls per RPC, can block or fail
// chosen RPCs, and, when events is set, publishes container events to subscribers.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	mu         sync.Mutex
	sandboxes  map[string]*runtimeapi.PodSandboxStatus
	containers map[string]*fakeContainer
	images     map[string]*runtimeapi.Image
	nextID     int
	now        int64 // fake nanosecond clock for CreatedAt etc.; advances on every mutation
	calls      map[string]int
	// podLists counts ListPodSandbox calls whose selector names a pod UID.
	podLists map[string]int
	// block makes these RPCs wait for their context to end.
	block map[string]bool
	// fail makes these RPCs return the error.
	fail map[string]error
	// vanish makes ContainerStatus/PodSandboxStatus of these IDs answer NotFound although
	// List still shows them (an object removed between List and Status).
	vanish map[string]bool
	// ignoreSelectors makes List calls ignore label selectors (a sloppy runtime).
	ignoreSelectors bool
	// withContainers makes PodSandboxStatus answer with the statuses of the
	// sandbox's containers (containers_statuses, as the simulated runtime
	// does; containerd 2 does not), except vanished ones.
	withContainers bool
	// lastStopTimeout is the Timeout of the last StopContainer request.
	lastStopTimeout int64

	// events enables GetContainerEvents; otherwise it answers Unimplemented.
	events bool
	subs   map[int]chan *runtimeapi.ContainerEventResponse
	nsub   int
	// breakStreams ends every open event stream with Unavailable when closed.
	breakStreams chan struct{}
	sent         int // events sent on streams
}

type fakeContainer struct {
	sandboxID string
	status    *runtimeapi.ContainerStatus
}

type fakeImages struct {
	runtimeapi.UnimplementedImageServiceServer
	f *fakeRuntime
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{
		sandboxes:    map[string]*runtimeapi.PodSandboxStatus{},
		containers:   map[string]*fakeContainer{},
		images:       map[string]*runtimeapi.Image{},
		now:          time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(),
		calls:        map[string]int{},
		podLists:     map[string]int{},
		block:        map[string]bool{},
		fail:         map[string]error{},
		vanish:       map[string]bool{},
		subs:         map[int]chan *runtimeapi.ContainerEventResponse{},
		breakStreams: make(chan struct{}),
	}
}

// serveFake serves f on a unix socket in a temp dir and returns the socket path.
func serveFake(t *testing.T, f *fakeRuntime) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, &fakeImages{f: f})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return sock
}

// dialFake serves f and returns a Client dialled to it over the unix socket.
func dialFake(t *testing.T, f *fakeRuntime, opts Options) *Client {
	t.Helper()
	sock := serveFake(t, f)
	c, err := Dial(context.Background(), "unix://"+sock, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// enter records a call of op and applies block/fail. It must be called without f.mu held.
func (f *fakeRuntime) enter(ctx context.Context, op string) error {
	f.mu.Lock()
	f.calls[op]++
	block, err := f.block[op], f.fail[op]
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

func (f *fakeRuntime) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fakeRuntime) tick() int64 {
	f.now += int64(time.Second)
	return f.now
}

func (f *fakeRuntime) newID(prefix string) string {
	f.nextID++
	return fmt.Sprintf("%s%03d", prefix, f.nextID)
}

// clone copies a message so that gRPC marshals it outside f.mu without racing with mutations.
func clone[M proto.Message](m M) M { return proto.Clone(m).(M) }

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "%s %q not found", kind, id)
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// podLabels returns the labels actorlet puts on a pod's objects; managed=false leaves out
// LabelManaged (another tenant's pod).
func podLabels(uid string, managed bool) map[string]string {
	l := map[string]string{LabelPodUID: uid, LabelPodName: "name-" + uid, LabelPodNamespace: "ns"}
	if managed {
		l[LabelManaged] = ManagedValue
	}
	return l
}

// addSandbox adds a sandbox directly (no RPC) and returns its ID.
func (f *fakeRuntime) addSandbox(uid string, attempt uint32, ready bool, ip string, managed bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("sb")
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	f.sandboxes[id] = &runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  &runtimeapi.PodSandboxMetadata{Name: "name-" + uid, Uid: uid, Namespace: "ns", Attempt: attempt},
		State:     state,
		CreatedAt: f.tick(),
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: ip},
		Labels:    podLabels(uid, managed),
	}
	return id
}

// addContainer adds a container directly (no RPC) in the given state and returns its ID.
func (f *fakeRuntime) addContainer(sandboxID, name string, attempt uint32, state runtimeapi.ContainerState) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb := f.sandboxes[sandboxID]
	id := f.newID("ct")
	labels := map[string]string{LabelContainerName: name}
	for k, v := range sb.Labels {
		labels[k] = v
	}
	st := &runtimeapi.ContainerStatus{
		Id:        id,
		Metadata:  &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		State:     state,
		CreatedAt: f.tick(),
		Image:     &runtimeapi.ImageSpec{Image: "busybox:1"},
		ImageRef:  "sha256:busybox",
		Labels:    labels,
	}
	if state != runtimeapi.ContainerState_CONTAINER_CREATED {
		st.StartedAt = f.tick()
	}
	f.containers[id] = &fakeContainer{sandboxID: sandboxID, status: st}
	f.publishLocked(id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return id
}

// exit marks a container exited with code and reason, and publishes a stop event.
func (f *fakeRuntime) exit(id string, code int32, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.containers[id].status
	st.State = runtimeapi.ContainerState_CONTAINER_EXITED
	st.ExitCode, st.Reason, st.FinishedAt = code, reason, f.tick()
	f.publishLocked(id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// removePod deletes all objects of a pod, publishing delete events.
func (f *fakeRuntime) removePod(uid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.containers {
		if c.status.Labels[LabelPodUID] == uid {
			f.publishLocked(id, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
			delete(f.containers, id)
		}
	}
	for id, s := range f.sandboxes {
		if s.Labels[LabelPodUID] == uid {
			delete(f.sandboxes, id)
		}
	}
}

// publishLocked sends an event about container id to every subscriber, like containerd: with
// the sandbox status and the container status.
func (f *fakeRuntime) publishLocked(id string, typ runtimeapi.ContainerEventType) {
	c := f.containers[id]
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        id,
		ContainerEventType: typ,
		CreatedAt:          f.now,
		PodSandboxStatus:   clone(f.sandboxes[c.sandboxID]),
		ContainersStatuses: []*runtimeapi.ContainerStatus{clone(c.status)},
	}
	for _, ch := range f.subs {
		ch <- ev
	}
}

// subscribers returns the number of open event streams.
func (f *fakeRuntime) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

func (f *fakeRuntime) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := f.enter(ctx, "Version"); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "1.0", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeRuntime) Status(ctx context.Context, _ *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	if err := f.enter(ctx, "Status"); err != nil {
		return nil, err
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

func (f *fakeRuntime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	if err := f.enter(ctx, "RunPodSandbox"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("sb")
	f.sandboxes[id] = &runtimeapi.PodSandboxStatus{
		Id:        id,
		Metadata:  req.GetConfig().GetMetadata(),
		State:     runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: f.tick(),
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.1"},
		Labels:    req.GetConfig().GetLabels(),
	}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (f *fakeRuntime) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	if err := f.enter(ctx, "StopPodSandbox"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	s.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (f *fakeRuntime) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	if err := f.enter(ctx, "RemovePodSandbox"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sandboxes[req.GetPodSandboxId()]; !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	delete(f.sandboxes, req.GetPodSandboxId())
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (f *fakeRuntime) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	if err := f.enter(ctx, "PodSandboxStatus"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sandboxes[req.GetPodSandboxId()]
	if !ok || f.vanish[req.GetPodSandboxId()] {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: clone(s)}
	if f.withContainers {
		for id, c := range f.containers {
			if c.sandboxID == req.GetPodSandboxId() && !f.vanish[id] {
				resp.ContainersStatuses = append(resp.ContainersStatuses, clone(c.status))
			}
		}
	}
	return resp, nil
}

func (f *fakeRuntime) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := f.enter(ctx, "ListPodSandbox"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	flt := req.GetFilter()
	if uid := flt.GetLabelSelector()[LabelPodUID]; uid != "" {
		f.podLists[uid]++
	}
	var items []*runtimeapi.PodSandbox
	for id, s := range f.sandboxes {
		if flt.GetId() != "" && flt.GetId() != id ||
			flt.GetState() != nil && flt.GetState().GetState() != s.State ||
			!f.ignoreSelectors && !matches(flt.GetLabelSelector(), s.Labels) {
			continue
		}
		items = append(items, &runtimeapi.PodSandbox{
			Id: id, Metadata: s.Metadata, State: s.State, CreatedAt: s.CreatedAt, Labels: s.Labels,
		})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

func (f *fakeRuntime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	if err := f.enter(ctx, "CreateContainer"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sandboxes[req.GetPodSandboxId()]; !ok {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	id := f.newID("ct")
	cfg := req.GetConfig()
	f.containers[id] = &fakeContainer{sandboxID: req.GetPodSandboxId(), status: &runtimeapi.ContainerStatus{
		Id: id, Metadata: cfg.GetMetadata(), State: runtimeapi.ContainerState_CONTAINER_CREATED,
		CreatedAt: f.tick(), Image: cfg.GetImage(), ImageRef: "sha256:" + cfg.GetImage().GetImage(), Labels: cfg.GetLabels(),
	}}
	f.publishLocked(id, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

func (f *fakeRuntime) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	if err := f.enter(ctx, "StartContainer"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %v", req.GetContainerId(), c.status.State)
	}
	c.status.State, c.status.StartedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, f.tick()
	f.publishLocked(req.GetContainerId(), runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.StartContainerResponse{}, nil
}

func (f *fakeRuntime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	if err := f.enter(ctx, "StopContainer"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastStopTimeout = req.GetTimeout()
	c, ok := f.containers[req.GetContainerId()]
	if !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	if c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		c.status.State, c.status.ExitCode, c.status.Reason, c.status.FinishedAt =
			runtimeapi.ContainerState_CONTAINER_EXITED, 137, "Error", f.tick()
		f.publishLocked(req.GetContainerId(), runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

func (f *fakeRuntime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if err := f.enter(ctx, "RemoveContainer"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.containers[req.GetContainerId()]; !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	f.publishLocked(req.GetContainerId(), runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	delete(f.containers, req.GetContainerId())
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (f *fakeRuntime) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := f.enter(ctx, "ListContainers"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	flt := req.GetFilter()
	var items []*runtimeapi.Container
	for id, c := range f.containers {
		s := c.status
		if flt.GetId() != "" && flt.GetId() != id ||
			flt.GetPodSandboxId() != "" && flt.GetPodSandboxId() != c.sandboxID ||
			flt.GetState() != nil && flt.GetState().GetState() != s.State ||
			!f.ignoreSelectors && !matches(flt.GetLabelSelector(), s.Labels) {
			continue
		}
		// Like a real runtime: a summary, without exit code or start/finish times.
		items = append(items, &runtimeapi.Container{
			Id: id, PodSandboxId: c.sandboxID, Metadata: s.Metadata, Image: s.Image, ImageRef: s.ImageRef,
			State: s.State, CreatedAt: s.CreatedAt, Labels: s.Labels,
		})
	}
	return &runtimeapi.ListContainersResponse{Containers: items}, nil
}

func (f *fakeRuntime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := f.enter(ctx, "ContainerStatus"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[req.GetContainerId()]
	if !ok || f.vanish[req.GetContainerId()] {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatusResponse{Status: clone(c.status)}, nil
}

func (f *fakeRuntime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if err := f.enter(ctx, "ExecSync"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.containers[req.GetContainerId()]; !ok {
		return nil, notFound("container", req.GetContainerId())
	}
	return &runtimeapi.ExecSyncResponse{Stdout: []byte(strings.Join(req.GetCmd(), " ")), ExitCode: 3}, nil
}

func (f *fakeRuntime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	if err := f.enter(stream.Context(), "GetContainerEvents"); err != nil {
		return err
	}
	f.mu.Lock()
	if !f.events {
		f.mu.Unlock()
		return status.Error(codes.Unimplemented, "method GetContainerEvents not implemented")
	}
	ch := make(chan *runtimeapi.ContainerEventResponse, 100000)
	f.nsub++
	n := f.nsub
	f.subs[n] = ch
	brk := f.breakStreams
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.subs, n)
		f.mu.Unlock()
	}()
	for {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-brk:
			return status.Error(codes.Unavailable, "event stream broken")
		case ev := <-ch:
			if err := stream.Send(ev); err != nil {
				return err
			}
			f.mu.Lock()
			f.sent++
			f.mu.Unlock()
		}
	}
}

func (i *fakeImages) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	f := i.f
	if err := f.enter(ctx, "PullImage"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name := req.GetImage().GetImage()
	f.images[name] = &runtimeapi.Image{Id: "sha256:" + name, RepoTags: []string{name}, Size: 42}
	return &runtimeapi.PullImageResponse{ImageRef: "sha256:" + name}, nil
}

func (i *fakeImages) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	f := i.f
	if err := f.enter(ctx, "ImageStatus"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: f.images[req.GetImage().GetImage()]}, nil
}

func (i *fakeImages) ListImages(ctx context.Context, _ *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	f := i.f
	if err := f.enter(ctx, "ListImages"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var imgs []*runtimeapi.Image
	for _, img := range f.images {
		imgs = append(imgs, img)
	}
	return &runtimeapi.ListImagesResponse{Images: imgs}, nil
}

func (i *fakeImages) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	f := i.f
	if err := f.enter(ctx, "RemoveImage"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name := req.GetImage().GetImage()
	if _, ok := f.images[name]; !ok {
		return nil, notFound("image", name)
	}
	delete(f.images, name)
	return &runtimeapi.RemoveImageResponse{}, nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // poll interval, not a wait for an event
	}
}
