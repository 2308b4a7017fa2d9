package cri

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDialUnixSocketVersion(t *testing.T) {
	f := newFakeRuntime()
	sock := serveFake(t, f)
	for _, ep := range []string{"unix://" + sock, sock} {
		t.Run(ep, func(t *testing.T) {
			c, err := Dial(context.Background(), ep, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Timeout() != DefaultTimeout {
				t.Errorf("Timeout() = %v, want %v", c.Timeout(), DefaultTimeout)
			}
			v, err := c.Version(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if v.GetRuntimeName() != "fake" || v.GetRuntimeApiVersion() != "v1" {
				t.Errorf("Version = %v", v)
			}
		})
	}
}

func TestDialSeparateImageEndpoint(t *testing.T) {
	rt, img := newFakeRuntime(), newFakeRuntime()
	rsock, isock := serveFake(t, rt), serveFake(t, img)
	c, err := Dial(context.Background(), "unix://"+rsock, isock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.PullImage(context.Background(), &runtimeapi.ImageSpec{Image: "busybox"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rt.count("PullImage") != 0 || img.count("PullImage") != 1 || img.count("Version") != 0 || rt.count("Version") != 1 {
		t.Errorf("calls went to the wrong endpoint: runtime %v, image %v", rt.calls, img.calls)
	}
}

func TestDialRejectsUnsupportedEndpoints(t *testing.T) {
	for _, ep := range []string{"sim://node1", "tcp://127.0.0.1:1234", "npipe:////./pipe/x", "", "relative/cri.sock", "unix://relative.sock"} {
		c, err := Dial(context.Background(), ep, "", Options{})
		if err == nil {
			c.Close()
			t.Errorf("Dial(%q) succeeded", ep)
			continue
		}
		if KindOf(err) != InvalidArgument || !strings.Contains(err.Error(), "Dial") {
			t.Errorf("Dial(%q) = %v (kind %v), want InvalidArgument naming Dial", ep, err, KindOf(err))
		}
	}
	_, err := Dial(context.Background(), "sim://node1", "", Options{})
	if !strings.Contains(err.Error(), `"sim"`) {
		t.Errorf("error %q does not name the scheme", err)
	}
	_, err = Dial(context.Background(), "/run/ok.sock", "tcp://x:1", Options{})
	if KindOf(err) != InvalidArgument || !strings.Contains(err.Error(), "tcp://x:1") {
		t.Errorf("bad image endpoint: %v", err)
	}
}

func TestUnreachableRuntimeIsUnavailable(t *testing.T) {
	c, err := Dial(context.Background(), filepath.Join(t.TempDir(), "missing.sock"), "", Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Version(context.Background())
	if KindOf(err) != Unavailable || !errors.Is(err, ErrUnavailable) || !Retryable(err) {
		t.Fatalf("Version on missing socket = %v (kind %v), want Unavailable", err, KindOf(err))
	}
}

func TestPerCallTimeout(t *testing.T) {
	f := newFakeRuntime()
	f.block["Version"] = true
	f.block["ContainerStatus"] = true
	c := dialFake(t, f, Options{Timeout: 50 * time.Millisecond})

	start := time.Now()
	_, err := c.Version(context.Background())
	if KindOf(err) != Timeout || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !Retryable(err) {
		t.Fatalf("Version = %v (kind %v), want Timeout", err, KindOf(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %v", d)
	}
	_, err = c.ContainerStatus(context.Background(), "ct-blocked")
	if KindOf(err) != Timeout || !strings.Contains(err.Error(), "ContainerStatus") || !strings.Contains(err.Error(), "ct-blocked") {
		t.Fatalf("ContainerStatus = %v, want Timeout naming op and ID", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Op != "ContainerStatus" || ce.ID != "ct-blocked" {
		t.Errorf("error fields = %+v", ce)
	}

	// The caller's own cancellation is Canceled, not Timeout, and not retryable.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Version(ctx)
	if KindOf(err) != Canceled || Retryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("Version with canceled ctx = %v (kind %v)", err, KindOf(err))
	}
}

func TestStopAndRemoveAreIdempotent(t *testing.T) {
	f := newFakeRuntime()
	c := dialFake(t, f, Options{})
	ctx := context.Background()

	for op, call := range map[string]func() error{
		"StopPodSandbox":   func() error { return c.StopPodSandbox(ctx, "sb-gone") },
		"RemovePodSandbox": func() error { return c.RemovePodSandbox(ctx, "sb-gone") },
		"StopContainer":    func() error { return c.StopContainer(ctx, "ct-gone", time.Second) },
		"RemoveContainer":  func() error { return c.RemoveContainer(ctx, "ct-gone") },
		"RemoveImage":      func() error { return c.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: "gone:1"}) },
	} {
		if err := call(); err != nil {
			t.Errorf("%s of unknown ID = %v, want nil", op, err)
		}
		if f.count(op) != 1 {
			t.Errorf("%s reached the runtime %d times, want 1", op, f.count(op))
		}
	}

	// Calls that are not idempotent report NotFound, naming op and ID.
	err := c.StartContainer(ctx, "ct-gone")
	if KindOf(err) != NotFound || !errors.Is(err, ErrNotFound) || Retryable(err) {
		t.Errorf("StartContainer of unknown ID = %v, want NotFound", err)
	}
	if want := `cri StartContainer "ct-gone": `; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
	if _, err := c.PodSandboxStatus(ctx, "sb-gone"); KindOf(err) != NotFound {
		t.Errorf("PodSandboxStatus of unknown ID = %v, want NotFound", err)
	}

	// Other errors of Stop/Remove are not swallowed.
	f.mu.Lock()
	f.fail["StopContainer"] = errors.New("boom") // not a status: the server turns it into Unknown
	f.mu.Unlock()
	if err := c.StopContainer(ctx, "ct-x", 0); KindOf(err) != Internal {
		t.Errorf("StopContainer with failing runtime = %v, want Internal", err)
	}
}

func TestStopContainerGraceRoundsUp(t *testing.T) {
	f := newFakeRuntime()
	c := dialFake(t, f, Options{})
	for _, tc := range []struct {
		grace time.Duration
		want  int64
	}{{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {30 * time.Second, 30}} {
		if err := c.StopContainer(context.Background(), "ct", tc.grace); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		got := f.lastStopTimeout
		f.mu.Unlock()
		if got != tc.want {
			t.Errorf("grace %v sent as %ds, want %ds", tc.grace, got, tc.want)
		}
	}
}

// TestLifecycle runs a pod through the client end to end.
func TestLifecycle(t *testing.T) {
	f := newFakeRuntime()
	c := dialFake(t, f, Options{})
	ctx := context.Background()

	st, err := c.Status(ctx, false)
	if err != nil || len(st.GetStatus().GetConditions()) != 2 {
		t.Fatalf("Status = %v, %v", st, err)
	}

	img := &runtimeapi.ImageSpec{Image: "busybox:1"}
	if got, err := c.ImageStatus(ctx, img); err != nil || got != nil {
		t.Fatalf("ImageStatus of absent image = %v, %v; want nil, nil", got, err)
	}
	ref, err := c.PullImage(ctx, img, nil, nil)
	if err != nil || ref != "sha256:busybox:1" {
		t.Fatalf("PullImage = %q, %v", ref, err)
	}
	if got, err := c.ImageStatus(ctx, img); err != nil || got.GetId() != ref {
		t.Fatalf("ImageStatus = %v, %v", got, err)
	}
	if imgs, err := c.ListImages(ctx, nil); err != nil || len(imgs) != 1 {
		t.Fatalf("ListImages = %v, %v", imgs, err)
	}

	labels := podLabels("uid-1", true)
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "uid-1", Attempt: 0},
		Labels:   labels,
	}
	sb, err := c.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	ctLabels := map[string]string{LabelContainerName: "app"}
	for k, v := range labels {
		ctLabels[k] = v
	}
	ct, err := c.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 2},
		Image:    img,
		Labels:   ctLabels,
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, ct); err != nil {
		t.Fatal(err)
	}
	cs, err := c.ContainerStatus(ctx, ct)
	if err != nil || cs.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("ContainerStatus = %v, %v", cs, err)
	}
	res, err := c.ExecSync(ctx, ct, []string{"echo", "hi"}, time.Second)
	if err != nil || string(res.GetStdout()) != "echo hi" || res.GetExitCode() != 3 {
		t.Fatalf("ExecSync = %v, %v", res, err)
	}

	v, err := c.ListPod(ctx, "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Sandboxes) != 1 || !v.Sandboxes[0].Ready || v.Sandboxes[0].IP != "10.0.0.1" ||
		len(v.Containers) != 1 || v.Containers[0].State != ContainerRunning || v.Containers[0].Attempt != 2 ||
		v.Containers[0].SandboxID != sb || v.Containers[0].ImageRef != ref {
		t.Fatalf("ListPod = %+v", v)
	}

	if err := c.StopContainer(ctx, ct, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveContainer(ctx, ct); err != nil {
		t.Fatal(err)
	}
	if err := c.StopPodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	if v, err := c.ListPod(ctx, "uid-1"); err != nil || !v.Empty() || v.UID != "uid-1" {
		t.Fatalf("ListPod after removal = %+v, %v", v, err)
	}
}
