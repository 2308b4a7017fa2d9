// Package cri is actorlet's client for a container runtime speaking CRI v1 over gRPC
// (containerd, CRI-O, or an in-process simulator).
//
// Client wraps the runtime and image services with per-call deadlines, idempotent stop/remove
// and errors classified by Kind (errors.go). PodView (podview.go) is a runtime-agnostic
// snapshot of what the runtime runs for one pod, restricted to objects labelled LabelManaged.
// Watcher (watch.go) turns CRI container events, or periodic relisting when the runtime has no
// events, into a stream of changed PodViews.
package cri

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// DefaultTimeout is the per-call deadline when Options.Timeout is zero. It matches the
// kubelet's --runtime-request-timeout default.
const DefaultTimeout = 2 * time.Minute

// maxMsgSize bounds gRPC messages both ways; List calls on a busy node exceed gRPC's 4 MiB default.
const maxMsgSize = 16 << 20

// Options configures a Client.
type Options struct {
	// Timeout is the deadline of each unary call (DefaultTimeout when zero or negative).
	// Longer calls get a multiple of it; see the methods.
	Timeout time.Duration
	// Logger receives debug records of failed calls and a warning for each call still
	// unanswered after SlowCall (zap.NewNop when nil).
	Logger *zap.Logger
	// Observer is told of every unary call when it returns (nil: nobody).
	Observer Observer
	// SlowCall is how long a call may go unanswered before it is logged as hanging
	// (DefaultSlowCall when zero).
	SlowCall time.Duration
	// Clock gives the listing times of PodViews (PodView.ListedAt), which
	// the lifecycle compares with journaled creation times, so it must be
	// the node's clock (default: the real clock).
	Clock clock.PassiveClock
	// StatusConcurrency bounds the Status calls one listing has in flight
	// (DefaultStatusConcurrency when zero; 1 for a runtime that must be
	// called from one goroutine, as the deterministic simulation's).
	StatusConcurrency int
	// TracerProvider, when set, traces every call Dial's connections make
	// (TracingDialOptions); nil: no tracing. Clients made by NewFromConn
	// are traced by their connection's maker.
	TracerProvider trace.TracerProvider
}

// DefaultStatusConcurrency is the default Options.StatusConcurrency: a
// node that lost its journal asks for every object it runs.
const DefaultStatusConcurrency = 16

// DefaultSlowCall is the default Options.SlowCall.
const DefaultSlowCall = 15 * time.Second

// Observer is told of the Client's unary calls, for metrics. CallDone is called from the
// caller's goroutine once the call returned; op is the RPC's name ("RunPodSandbox"), err
// the *Error returned (nil on success, and also NotFound from an idempotent Stop or
// Remove, which the caller sees as success). It must not block.
type Observer interface {
	CallDone(op string, took time.Duration, err error)
}

// Client is a CRI v1 client. It is safe for concurrent use.
//
// Guarantees:
//   - Every call runs under a deadline derived from ctx and Options.Timeout, except
//     GetContainerEvents, which lives as long as ctx.
//   - Every error returned is an *Error naming the RPC and the object, classified by Kind.
//   - StopPodSandbox, RemovePodSandbox, StopContainer, RemoveContainer and RemoveImage are
//     idempotent: NotFound from the runtime is reported as success.
type Client struct {
	runtime runtimeapi.RuntimeServiceClient
	image   runtimeapi.ImageServiceClient
	// statusConcurrency: see Options.StatusConcurrency.
	statusConcurrency int
	// tasks is containerd's task service on the runtime's socket, for
	// EndStrandedTask only (other runtimes answer Unimplemented).
	tasks   tasksapi.TasksClient
	timeout time.Duration
	log     *zap.Logger
	obs     Observer
	slow    time.Duration
	clock   clock.PassiveClock
	// endpoint names the runtime in errors of calls that concern no single object.
	endpoint string
	// conns are closed by Close; empty for clients made by NewFromConn.
	conns []*grpc.ClientConn
}

// Dial returns a client for the runtime at runtimeEndpoint and the image service at
// imageEndpoint ("" means the runtime endpoint). Endpoints are "unix:///abs/path" or a bare
// absolute path; any other scheme (tcp://, npipe://, sim://) is rejected with an
// InvalidArgument error: callers handle their own schemes before calling Dial.
//
// Dial does not wait for the runtime: it only sets up the connection, which is made by the
// first call and remade (backoff capped at 3s) whenever the runtime restarts. Calls made
// while the runtime is unreachable fail fast with Kind Unavailable. Probe with Version.
func Dial(ctx context.Context, runtimeEndpoint, imageEndpoint string, opts Options) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, newError("Dial", runtimeEndpoint, err)
	}
	rt, err := unixTarget(runtimeEndpoint)
	if err != nil {
		return nil, &Error{Op: "Dial", ID: runtimeEndpoint, Kind: InvalidArgument, Err: err}
	}
	rconn, err := newConn(rt, TracingDialOptions(opts.TracerProvider)...)
	if err != nil {
		return nil, newError("Dial", runtimeEndpoint, err)
	}
	c := newClient(rconn, rconn, opts)
	c.endpoint = runtimeEndpoint
	c.conns = []*grpc.ClientConn{rconn}
	if imageEndpoint == "" {
		return c, nil
	}
	it, err := unixTarget(imageEndpoint)
	if err != nil {
		_ = rconn.Close()
		return nil, &Error{Op: "Dial", ID: imageEndpoint, Kind: InvalidArgument, Err: err}
	}
	if it == rt {
		return c, nil
	}
	iconn, err := newConn(it, TracingDialOptions(opts.TracerProvider)...)
	if err != nil {
		_ = rconn.Close()
		return nil, newError("Dial", imageEndpoint, err)
	}
	c.image = runtimeapi.NewImageServiceClient(iconn)
	c.conns = append(c.conns, iconn)
	return c, nil
}

// NewConn returns a gRPC connection to the CRI socket at endpoint ("unix:///abs/path" or an
// absolute path), made as Dial makes its own, for callers that speak the CRI themselves (a
// proxy). The caller closes it.
func NewConn(endpoint string) (*grpc.ClientConn, error) {
	target, err := unixTarget(endpoint)
	if err != nil {
		return nil, &Error{Op: "Dial", ID: endpoint, Kind: InvalidArgument, Err: err}
	}
	conn, err := newConn(target)
	if err != nil {
		return nil, newError("Dial", endpoint, err)
	}
	return conn, nil
}

// NewFromConn returns a client on connections the caller owns (an in-process server over
// bufconn, a simulator). imageConn nil means runtimeConn. Close does not close them.
func NewFromConn(runtimeConn, imageConn grpc.ClientConnInterface, opts Options) *Client {
	if imageConn == nil {
		imageConn = runtimeConn
	}
	c := newClient(runtimeConn, imageConn, opts)
	c.endpoint = "in-process"
	return c
}

func newClient(runtimeConn, imageConn grpc.ClientConnInterface, opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.SlowCall <= 0 {
		opts.SlowCall = DefaultSlowCall
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.StatusConcurrency <= 0 {
		opts.StatusConcurrency = DefaultStatusConcurrency
	}
	return &Client{
		statusConcurrency: opts.StatusConcurrency,
		clock:             opts.Clock,
		obs:               opts.Observer,
		slow:              opts.SlowCall,
		runtime:           runtimeapi.NewRuntimeServiceClient(runtimeConn),
		image:             runtimeapi.NewImageServiceClient(imageConn),
		tasks:             tasksapi.NewTasksClient(runtimeConn),
		timeout:           opts.Timeout,
		log:               opts.Logger,
	}
}

// unixTarget turns an endpoint into a gRPC target "unix:///abs/path".
func unixTarget(endpoint string) (string, error) {
	var path string
	switch {
	case strings.HasPrefix(endpoint, "unix://"):
		path = strings.TrimPrefix(endpoint, "unix://")
	case strings.HasPrefix(endpoint, "/"):
		path = endpoint
	case endpoint == "":
		return "", errors.New("empty endpoint: want unix:///path/to/socket")
	default:
		scheme, _, ok := strings.Cut(endpoint, "://")
		if !ok {
			return "", fmt.Errorf("endpoint %q is neither unix:///path nor an absolute path", endpoint)
		}
		return "", fmt.Errorf("unsupported endpoint scheme %q in %q: only unix:// is supported", scheme, endpoint)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("endpoint %q: socket path must be absolute", endpoint)
	}
	return "unix://" + filepath.Clean(path), nil
}

func newConn(target string, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	bo := backoff.DefaultConfig
	bo.BaseDelay = 100 * time.Millisecond
	bo.MaxDelay = 3 * time.Second
	return grpc.NewClient(target, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: 20 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	}, extra...)...)
}

// Close closes the connections made by Dial. It is a no-op for NewFromConn clients.
func (c *Client) Close() error {
	var errs []error
	for _, conn := range c.conns {
		if err := conn.Close(); err != nil {
			errs = append(errs, newError("Close", conn.Target(), err))
		}
	}
	c.conns = nil
	return errors.Join(errs...)
}

// Timeout returns the per-call deadline in use.
func (c *Client) Timeout() time.Duration { return c.timeout }

// call runs fn under a deadline of d and turns its error into an *Error for op on id.
// A call unanswered after c.slow is logged at warn level while it hangs, and once more
// when it ends.
func (c *Client) call(ctx context.Context, op, id string, d time.Duration, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var hung atomic.Bool
	slow := time.AfterFunc(c.slow, func() {
		hung.Store(true)
		c.log.Warn("the container runtime has not answered", zap.String("op", op), zap.String("id", id),
			zap.Duration("waited", time.Since(start)), zap.Duration("timeout", d))
	})
	err := newError(op, id, fn(ctx))
	took := time.Since(start)
	slow.Stop()
	if c.obs != nil {
		c.obs.CallDone(op, took, err)
	}
	switch {
	case hung.Load():
		c.log.Warn("the container runtime answered after hanging", zap.String("op", op), zap.String("id", id),
			zap.Duration("took", took), zap.Error(err))
	case err != nil:
		c.log.Debug("cri call failed", zap.String("op", op), zap.String("id", id),
			zap.Stringer("kind", KindOf(err)), zap.Error(err))
	}
	return err
}

// idempotent maps NotFound to success, for Stop and Remove calls.
func idempotent(err error) error {
	if KindOf(err) == NotFound {
		return nil
	}
	return err
}

// seconds converts d to whole seconds, rounding up; negative durations are 0.
func seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Version returns the runtime's name and version. Its ID in errors is the endpoint.
func (c *Client) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	var resp *runtimeapi.VersionResponse
	err := c.call(ctx, "Version", c.endpoint, c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
		return err
	})
	return resp, err
}

// Status returns the runtime's conditions (RuntimeReady, NetworkReady), handlers and features.
func (c *Client) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	var resp *runtimeapi.StatusResponse
	err := c.call(ctx, "Status", c.endpoint, c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: verbose})
		if err == nil && resp.GetStatus() == nil {
			err = errors.New("runtime returned no status")
		}
		return err
	})
	return resp, err
}

// CgroupDriver asks the runtime which cgroup driver it uses (the CRI
// RuntimeConfig call, KEP 4033). Runtimes that do not implement it answer
// with an error of kind Unimplemented.
func (c *Client) CgroupDriver(ctx context.Context) (runtimeapi.CgroupDriver, error) {
	var resp *runtimeapi.RuntimeConfigResponse
	err := c.call(ctx, "RuntimeConfig", c.endpoint, c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
		return err
	})
	if err != nil {
		return 0, err
	}
	return resp.GetLinux().GetCgroupDriver(), nil
}

// sandboxName names a sandbox that has no ID yet: "<namespace>/<name> <uid> attempt <n>".
func sandboxName(cfg *runtimeapi.PodSandboxConfig) string {
	m := cfg.GetMetadata()
	return fmt.Sprintf("%s/%s %s attempt %d", m.GetNamespace(), m.GetName(), m.GetUid(), m.GetAttempt())
}

// RunPodSandbox creates and starts a sandbox and returns its ID. It gets twice the per-call
// timeout, as network setup can be slow. Errors name the pod by namespace/name, UID and attempt.
func (c *Client) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	var id string
	err := c.call(ctx, "RunPodSandbox", sandboxName(cfg), 2*c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: runtimeHandler})
		if err != nil {
			return err
		}
		if id = resp.GetPodSandboxId(); id == "" {
			return errors.New("runtime returned an empty sandbox ID")
		}
		return nil
	})
	return id, err
}

// StopPodSandbox stops every container in the sandbox and tears down its network.
// A sandbox that does not exist counts as stopped.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	return idempotent(c.call(ctx, "StopPodSandbox", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
		return err
	}))
}

// RemovePodSandbox removes the sandbox and its containers. A sandbox that does not exist
// counts as removed.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	return idempotent(c.call(ctx, "RemovePodSandbox", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
		return err
	}))
}

// PodSandboxStatus returns the sandbox's status. A missing sandbox is an error of Kind NotFound.
func (c *Client) PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	resp, err := c.podSandboxStatus(ctx, id)
	return resp.GetStatus(), err
}

// podSandboxStatus is PodSandboxStatus with the whole response (the
// statuses of the sandbox's containers, if the runtime gives them).
func (c *Client) podSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatusResponse, error) {
	var resp *runtimeapi.PodSandboxStatusResponse
	err := c.call(ctx, "PodSandboxStatus", id, c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
		if err != nil {
			return err
		}
		if resp.GetStatus() == nil {
			return errors.New("runtime returned no sandbox status")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// filterID describes a list filter for errors.
func filterID(id string, labels map[string]string) string {
	switch {
	case id != "":
		return id
	case labels[LabelPodUID] != "":
		return "pod " + labels[LabelPodUID]
	case len(labels) > 0:
		return fmt.Sprintf("labels %v", labels)
	default:
		return "all"
	}
}

// ListPodSandbox lists sandboxes matching filter (nil: all, including other tenants').
func (c *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	var items []*runtimeapi.PodSandbox
	err := c.call(ctx, "ListPodSandbox", filterID(filter.GetId(), filter.GetLabelSelector()), c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
		items = resp.GetItems()
		return err
	})
	return items, err
}

// CreateContainer creates a container in the sandbox and returns its ID. Errors name it
// "<sandboxID>/<container name> attempt <n>".
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	name := fmt.Sprintf("%s/%s attempt %d", sandboxID, cfg.GetMetadata().GetName(), cfg.GetMetadata().GetAttempt())
	var id string
	err := c.call(ctx, "CreateContainer", name, c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId: sandboxID, Config: cfg, SandboxConfig: sandboxCfg,
		})
		if err != nil {
			return err
		}
		if id = resp.GetContainerId(); id == "" {
			return errors.New("runtime returned an empty container ID")
		}
		return nil
	})
	return id, err
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	return c.call(ctx, "StartContainer", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
		return err
	})
}

// StopContainer stops a container, giving it gracePeriod (sent to the runtime in whole
// seconds, rounded up) between the stop signal and SIGKILL. The call's deadline is the
// per-call timeout plus gracePeriod. A container that does not exist counts as stopped.
func (c *Client) StopContainer(ctx context.Context, id string, gracePeriod time.Duration) error {
	secs := seconds(gracePeriod)
	return idempotent(c.call(ctx, "StopContainer", id, c.timeout+time.Duration(secs)*time.Second, func(ctx context.Context) error {
		_, err := c.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: secs})
		return err
	}))
}

// RemoveContainer removes a container, stopping it first if needed. A container that does not
// exist counts as removed.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	return idempotent(c.call(ctx, "RemoveContainer", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
		return err
	}))
}

// UpdateContainerResources gives a container new Linux resources (an
// in-place resize). A container that does not exist is an error (NotFound):
// it was not resized.
func (c *Client) UpdateContainerResources(ctx context.Context, id string, linux *runtimeapi.LinuxContainerResources) error {
	return c.call(ctx, "UpdateContainerResources", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: linux})
		return err
	})
}

// ListContainers lists containers matching filter (nil: all, including other tenants').
// The items are summaries: exit codes and timestamps other than CreatedAt need ContainerStatus.
func (c *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	var items []*runtimeapi.Container
	err := c.call(ctx, "ListContainers", filterID(filter.GetId(), filter.GetLabelSelector()), c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
		items = resp.GetContainers()
		return err
	})
	return items, err
}

// ContainerStatus returns a container's full status. A missing container is an error of Kind
// NotFound.
func (c *Client) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	var st *runtimeapi.ContainerStatus
	err := c.call(ctx, "ContainerStatus", id, c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			return err
		}
		if st = resp.GetStatus(); st == nil {
			return errors.New("runtime returned no container status")
		}
		return nil
	})
	return st, err
}

// Exec asks the runtime for a streaming URL that runs a command in a
// container (kubectl exec goes through it).
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	var resp *runtimeapi.ExecResponse
	err := c.call(ctx, "Exec", req.GetContainerId(), c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.Exec(ctx, req)
		return err
	})
	return resp, err
}

// Attach asks the runtime for a streaming URL attached to a container.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	var resp *runtimeapi.AttachResponse
	err := c.call(ctx, "Attach", req.GetContainerId(), c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.Attach(ctx, req)
		return err
	})
	return resp, err
}

// PortForward asks the runtime for a streaming URL forwarding ports of a
// sandbox.
func (c *Client) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	var resp *runtimeapi.PortForwardResponse
	err := c.call(ctx, "PortForward", req.GetPodSandboxId(), c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.runtime.PortForward(ctx, req)
		return err
	})
	return resp, err
}

// ReopenContainerLog asks the runtime to close the container's log file
// and open a new one at its LogPath, after the caller renamed the old one
// (log rotation). A missing container is an error of Kind NotFound.
func (c *Client) ReopenContainerLog(ctx context.Context, id string) error {
	return c.call(ctx, "ReopenContainerLog", id, c.timeout, func(ctx context.Context) error {
		_, err := c.runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
		return err
	})
}

// ExecSync runs cmd in the container and waits for it. timeout (whole seconds, rounded up;
// 0 means none) is enforced by the runtime; the call's deadline is the per-call timeout plus
// timeout. A non-zero exit status of cmd is not an error: read resp.ExitCode.
func (c *Client) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	secs := seconds(timeout)
	var resp *runtimeapi.ExecSyncResponse
	err := c.call(ctx, "ExecSync", id, c.timeout+time.Duration(secs)*time.Second, func(ctx context.Context) (err error) {
		resp, err = c.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: secs})
		return err
	})
	return resp, err
}

// PullImage pulls image and returns the runtime's reference to it (usually a digest). It gets
// four times the per-call timeout. auth and sandboxCfg may be nil.
func (c *Client) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	var ref string
	err := c.call(ctx, "PullImage", image.GetImage(), 4*c.timeout, func(ctx context.Context) error {
		resp, err := c.image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: image, Auth: auth, SandboxConfig: sandboxCfg})
		if err != nil {
			return err
		}
		if ref = resp.GetImageRef(); ref == "" {
			return errors.New("runtime returned an empty image reference")
		}
		return nil
	})
	return ref, err
}

// ImageStatus returns the image, or nil and no error when the runtime does not have it.
func (c *Client) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec) (*runtimeapi.Image, error) {
	var img *runtimeapi.Image
	err := c.call(ctx, "ImageStatus", image.GetImage(), c.timeout, func(ctx context.Context) error {
		resp, err := c.image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: image})
		img = resp.GetImage()
		return err
	})
	if KindOf(err) == NotFound { // CRI says nil image, but some runtimes answer NotFound.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if img.GetId() == "" {
		img = nil
	}
	return img, nil
}

// ListImages lists the images matching filter (nil: all).
func (c *Client) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	var imgs []*runtimeapi.Image
	err := c.call(ctx, "ListImages", filter.GetImage().GetImage(), c.timeout, func(ctx context.Context) error {
		resp, err := c.image.ListImages(ctx, &runtimeapi.ListImagesRequest{Filter: filter})
		imgs = resp.GetImages()
		return err
	})
	return imgs, err
}

// RemoveImage removes the image. An image that does not exist counts as removed.
func (c *Client) RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error {
	return idempotent(c.call(ctx, "RemoveImage", image.GetImage(), c.timeout, func(ctx context.Context) error {
		_, err := c.image.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: image})
		return err
	}))
}

// ListContainerStats returns the stats of the containers matching filter
// (nil: all, including other tenants').
func (c *Client) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	var stats []*runtimeapi.ContainerStats
	err := c.call(ctx, "ListContainerStats", filterID(filter.GetId(), filter.GetLabelSelector()), c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: filter})
		stats = resp.GetStats()
		return err
	})
	return stats, err
}

// ListPodSandboxStats returns the stats of the sandboxes matching filter
// (nil: all). A runtime that does not serve it fails with Kind
// Unimplemented.
func (c *Client) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	var stats []*runtimeapi.PodSandboxStats
	err := c.call(ctx, "ListPodSandboxStats", filterID(filter.GetId(), filter.GetLabelSelector()), c.timeout, func(ctx context.Context) error {
		resp, err := c.runtime.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: filter})
		stats = resp.GetStats()
		return err
	})
	return stats, err
}

// ImageFsInfo reports the usage of the filesystems that hold images.
func (c *Client) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	var resp *runtimeapi.ImageFsInfoResponse
	err := c.call(ctx, "ImageFsInfo", "", c.timeout, func(ctx context.Context) (err error) {
		resp, err = c.image.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
		return err
	})
	return resp, err
}

// EventStream is an open GetContainerEvents stream. Recv errors are *Error values (Op
// "GetContainerEvents"); a runtime without events fails the first Recv with Kind
// Unimplemented. The stream ends when the ctx given to GetContainerEvents is canceled.
type EventStream struct {
	s        grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse]
	endpoint string
}

// Recv blocks for the next event.
func (s *EventStream) Recv() (*runtimeapi.ContainerEventResponse, error) {
	ev, err := s.s.Recv()
	if err != nil {
		return nil, newError("GetContainerEvents", s.endpoint, err)
	}
	return ev, nil
}

// GetContainerEvents subscribes to the runtime's container events. The stream has no deadline:
// cancel ctx to end it and release its resources. Read it promptly: containerd delays its own
// work while a subscriber's buffer is full (Watcher drains into an unbounded queue for this).
func (c *Client) GetContainerEvents(ctx context.Context) (*EventStream, error) {
	s, err := c.runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return nil, newError("GetContainerEvents", c.endpoint, err)
	}
	return &EventStream{s: s, endpoint: c.endpoint}, nil
}
