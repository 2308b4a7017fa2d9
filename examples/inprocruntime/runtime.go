package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/serve"
)

// Program is what a container of the goroutine runtime runs: a Go
// function, chosen by the container's image. It runs on its own goroutine
// until it returns, and the container exits with the code it returns;
// StopContainer cancels ctx (the SIGTERM) and waits up to the grace
// period, after which the container is reported killed (137) and the
// function's late return is ignored. env is the container's environment;
// what it writes to out is the container's log, one CRI log line per line.
type Program func(ctx context.Context, env map[string]string, out io.Writer) int32

// RuntimeName is the goroutine runtime's name (CRI Version), which
// prefixes container IDs in pod statuses: goroutine://<id>.
const RuntimeName = "goroutine"

// goRuntime is a small container runtime of its own that "runs" containers
// as goroutines: it implements serve.Runtime (the CRI v1 servers, the
// interface the simulated runtime implements), serving the calls a node
// makes to run pods, and Unimplemented for the others (exec, attach,
// port-forward, stats, events: the node then relists). Images are the
// names of its programs; pulling one that has no program fails NotFound.
// Sandboxes have no network of their own: their IP is the one given.
type goRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	programs map[string]Program // by image name
	podIP    string

	mu         sync.Mutex
	seq        int
	sandboxes  map[string]*goSandbox
	containers map[string]*goContainer
	wg         sync.WaitGroup // running programs
}

var _ serve.Runtime = (*goRuntime)(nil)

type goSandbox struct {
	id        string
	cfg       *runtimeapi.PodSandboxConfig
	ready     bool
	createdAt int64
}

type goContainer struct {
	id, sandboxID string
	cfg           *runtimeapi.ContainerConfig
	logPath       string
	state         runtimeapi.ContainerState
	createdAt     int64
	startedAt     int64
	finishedAt    int64
	exitCode      int32
	reason        string
	cancel        context.CancelFunc
	done          chan struct{} // closed when the program returned
}

func newGoRuntime(programs map[string]Program, podIP string) *goRuntime {
	return &goRuntime{programs: programs, podIP: podIP,
		sandboxes: map[string]*goSandbox{}, containers: map[string]*goContainer{}}
}

// Close stops every running program and waits for them.
func (r *goRuntime) Close() {
	r.mu.Lock()
	for _, c := range r.containers {
		if c.cancel != nil {
			c.cancel()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *goRuntime) newID(kind string) string {
	r.seq++
	return fmt.Sprintf("%s-%d", kind, r.seq)
}

func now() int64 { return time.Now().UnixNano() }

// Version implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: RuntimeName, RuntimeVersion: "0.1.0", RuntimeApiVersion: "v1"}, nil
}

// Status implements runtimeapi.RuntimeServiceServer: always ready.
func (r *goRuntime) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true},
	}}}, nil
}

// RunPodSandbox implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	if req.GetConfig().GetMetadata().GetUid() == "" {
		return nil, status.Error(codes.InvalidArgument, "RunPodSandbox: metadata with a uid is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := &goSandbox{id: r.newID("sandbox"), cfg: req.GetConfig(), ready: true, createdAt: now()}
	r.sandboxes[sb.id] = sb
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: sb.id}, nil
}

// StopPodSandbox implements runtimeapi.RuntimeServiceServer: its
// containers are killed. Unknown IDs succeed, as the CRI asks.
func (r *goRuntime) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sb, ok := r.sandboxes[req.GetPodSandboxId()]; ok {
		sb.ready = false
		for _, c := range r.containers {
			if c.sandboxID == sb.id {
				r.killLocked(c)
			}
		}
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, c := range r.containers {
		if c.sandboxID == req.GetPodSandboxId() {
			r.killLocked(c)
			delete(r.containers, id)
		}
	}
	delete(r.sandboxes, req.GetPodSandboxId())
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (r *goRuntime) sandboxState(sb *goSandbox) runtimeapi.PodSandboxState {
	if sb.ready {
		return runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return runtimeapi.PodSandboxState_SANDBOX_NOTREADY
}

// PodSandboxStatus implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "sandbox %q not found", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{
		Id: sb.id, Metadata: sb.cfg.GetMetadata(), State: r.sandboxState(sb), CreatedAt: sb.createdAt,
		Network: &runtimeapi.PodSandboxNetworkStatus{Ip: r.podIP},
		Labels:  sb.cfg.GetLabels(), Annotations: sb.cfg.GetAnnotations(),
	}}, nil
}

// ListPodSandbox implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, sb := range r.sandboxes {
		if (f.GetId() != "" && f.GetId() != sb.id) || (f.GetState() != nil && f.GetState().GetState() != r.sandboxState(sb)) ||
			!matches(sb.cfg.GetLabels(), f.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{Id: sb.id, Metadata: sb.cfg.GetMetadata(), State: r.sandboxState(sb),
			CreatedAt: sb.createdAt, Labels: sb.cfg.GetLabels(), Annotations: sb.cfg.GetAnnotations()})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// CreateContainer implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	if _, ok := r.programs[imageName(cfg.GetImage().GetImage())]; !ok {
		return nil, status.Errorf(codes.NotFound, "CreateContainer %q: image %q not present", cfg.GetMetadata().GetName(), cfg.GetImage().GetImage())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sb, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok || !sb.ready {
		return nil, status.Errorf(codes.FailedPrecondition, "CreateContainer %q: sandbox %q not found or not ready", cfg.GetMetadata().GetName(), req.GetPodSandboxId())
	}
	c := &goContainer{id: r.newID("container"), sandboxID: sb.id, cfg: cfg,
		state: runtimeapi.ContainerState_CONTAINER_CREATED, createdAt: now()}
	if dir := sb.cfg.GetLogDirectory(); dir != "" && cfg.GetLogPath() != "" {
		c.logPath = filepath.Join(dir, cfg.GetLogPath())
	}
	r.containers[c.id] = c
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// StartContainer implements runtimeapi.RuntimeServiceServer: the program
// starts on its own goroutine.
func (r *goRuntime) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.GetContainerId())
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not CREATED", c.id, c.state)
	}
	prog := r.programs[imageName(c.cfg.GetImage().GetImage())]
	env := map[string]string{}
	for _, kv := range c.cfg.GetEnvs() {
		env[kv.GetKey()] = string(kv.GetValue())
	}
	out, err := newLogWriter(c.logPath)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "container %q: open its log: %v", c.id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	c.state, c.startedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, now()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		code := prog(ctx, env, out)
		out.Close()
		close(c.done)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.exitLocked(c, code, "")
	}()
	return &runtimeapi.StartContainerResponse{}, nil
}

// exitLocked records the container's exit (once).
func (r *goRuntime) exitLocked(c *goContainer, code int32, reason string) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	if reason == "" {
		reason = "Completed"
		if code != 0 {
			reason = "Error"
		}
	}
	c.state, c.finishedAt, c.exitCode, c.reason = runtimeapi.ContainerState_CONTAINER_EXITED, now(), code, reason
	c.cancel()
}

// killLocked ends a running container at once: 137, its program's later
// return is ignored.
func (r *goRuntime) killLocked(c *goContainer) {
	r.exitLocked(c, 137, "Error")
}

// StopContainer implements runtimeapi.RuntimeServiceServer: the program's
// ctx is canceled; it has the timeout to return, then it is killed.
func (r *goRuntime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	r.mu.Lock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		r.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil // stopping a stopped container succeeds
	}
	c.cancel()
	done := c.done
	r.mu.Unlock()
	t := time.NewTimer(time.Duration(req.GetTimeout()) * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killLocked(c) // a no-op if the program returned
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.containers[req.GetContainerId()]; ok {
		r.killLocked(c)
		delete(r.containers, c.id)
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// ListContainers implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range r.containers {
		if (f.GetId() != "" && f.GetId() != c.id) || (f.GetPodSandboxId() != "" && f.GetPodSandboxId() != c.sandboxID) ||
			(f.GetState() != nil && f.GetState().GetState() != c.state) || !matches(c.cfg.GetLabels(), f.GetLabelSelector()) {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: c.id, PodSandboxId: c.sandboxID, Metadata: c.cfg.GetMetadata(),
			Image: c.cfg.GetImage(), ImageRef: imageID(c.cfg.GetImage().GetImage()), State: c.state, CreatedAt: c.createdAt,
			Labels: c.cfg.GetLabels(), Annotations: c.cfg.GetAnnotations()})
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus implements runtimeapi.RuntimeServiceServer.
func (r *goRuntime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: c.cfg.GetMetadata(), State: c.state, CreatedAt: c.createdAt, StartedAt: c.startedAt,
		FinishedAt: c.finishedAt, ExitCode: c.exitCode, Reason: c.reason,
		Image: c.cfg.GetImage(), ImageRef: imageID(c.cfg.GetImage().GetImage()),
		Labels: c.cfg.GetLabels(), Annotations: c.cfg.GetAnnotations(), Mounts: c.cfg.GetMounts(), LogPath: c.logPath,
	}}, nil
}

// PullImage implements runtimeapi.ImageServiceServer: an image is present
// if it names a program.
func (r *goRuntime) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := imageName(req.GetImage().GetImage())
	if _, ok := r.programs[name]; !ok {
		return nil, status.Errorf(codes.NotFound, "pull %q: no program of that name", req.GetImage().GetImage())
	}
	return &runtimeapi.PullImageResponse{ImageRef: imageID(name)}, nil
}

// ImageStatus implements runtimeapi.ImageServiceServer: no image (and no
// error) for a name without a program.
func (r *goRuntime) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	name := imageName(req.GetImage().GetImage())
	if _, ok := r.programs[name]; !ok {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: imageID(name), RepoTags: []string{name}}}, nil
}

// ListImages implements runtimeapi.ImageServiceServer.
func (r *goRuntime) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	var out []*runtimeapi.Image
	for name := range r.programs {
		out = append(out, &runtimeapi.Image{Id: imageID(name), RepoTags: []string{name}})
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// ImageFsInfo implements runtimeapi.ImageServiceServer: programs take no
// disk.
func (r *goRuntime) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

// imageName is the program name an image reference or ID names.
func imageName(ref string) string { return strings.TrimPrefix(ref, imagePrefix) }

// imageID is the ID of a program's image: "goroutine:<name>".
func imageID(name string) string { return imagePrefix + imageName(name) }

const imagePrefix = RuntimeName + ":"

// matches reports whether labels has every key and value of sel.
func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// logWriter writes a program's output to its log file in the CRI log
// format, a line at a time ("<RFC 3339 time> stdout F <line>"); nil file:
// discarded.
type logWriter struct {
	mu      sync.Mutex
	f       *os.File
	partial []byte
}

func newLogWriter(path string) (*logWriter, error) {
	if path == "" {
		return &logWriter{}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return &logWriter{f: f}, nil
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := w.line(w.partial[:i], "F"); err != nil {
			return 0, err
		}
		w.partial = w.partial[i+1:]
	}
}

func (w *logWriter) line(b []byte, tag string) error {
	if w.f == nil {
		return nil
	}
	_, err := fmt.Fprintf(w.f, "%s stdout %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), tag, b)
	return err
}

// Close writes what is left of a last line (tag P: partial) and closes.
func (w *logWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		_ = w.line(w.partial, "P")
		w.partial = nil
	}
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}
