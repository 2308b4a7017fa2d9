package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPodLifecycleOverUnixSocket drives one pod through its whole life as
// the kubelet would, over gRPC on a real unix socket.
func TestPodLifecycleOverUnixSocket(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{RuntimeVersion: "1.2.3"})
	c := serveUnix(t, rt)

	v, err := c.Version(ctx, &runtimeapi.VersionRequest{})
	noErr(t, err, "Version")
	if v.RuntimeName != "actorlet-sim" || v.RuntimeVersion != "1.2.3" || v.RuntimeApiVersion != "v1" {
		t.Fatalf("Version = %v", v)
	}
	st, err := c.Status(ctx, &runtimeapi.StatusRequest{})
	noErr(t, err, "Status")
	for _, cond := range st.Status.Conditions {
		if !cond.Status {
			t.Errorf("condition %s is false", cond.Type)
		}
	}
	if len(st.Status.Conditions) != 2 || len(st.Info) != 0 {
		t.Errorf("Status = %v, want 2 conditions and no info without verbose", st)
	}

	pulled, err := c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	noErr(t, err, "PullImage")
	sum := sha256.Sum256([]byte("docker.io/library/busybox:latest"))
	if want := "sha256:" + hex.EncodeToString(sum[:]); pulled.ImageRef != want {
		t.Fatalf("PullImage ref = %q, want %q", pulled.ImageRef, want)
	}

	podCfg := podConfig("web", "uid-1", 0)
	run, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podCfg})
	noErr(t, err, "RunPodSandbox")
	sbID := run.PodSandboxId
	if !isHex64(sbID) {
		t.Fatalf("sandbox ID %q is not 64 hex digits", sbID)
	}
	sbs, err := c.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbID})
	noErr(t, err, "PodSandboxStatus")
	s := sbs.Status
	if s.State != runtimeapi.PodSandboxState_SANDBOX_READY || s.CreatedAt <= 0 || s.Id != sbID {
		t.Fatalf("sandbox status = %v", s)
	}
	if s.Metadata.Name != "web" || s.Metadata.Uid != "uid-1" || s.Labels["app"] != "web" || s.Annotations["note"] != "sandbox of web" {
		t.Errorf("metadata/labels/annotations not kept: %v", s)
	}
	ip := netip.MustParseAddr(s.Network.Ip)
	if !netip.MustParsePrefix(DefaultPodCIDR).Contains(ip) || ip == netip.MustParseAddr("10.88.0.0") || ip == netip.MustParseAddr("10.88.0.1") {
		t.Errorf("pod IP %v not a usable address of %s", ip, DefaultPodCIDR)
	}
	if s.Linux.Namespaces.Options.Pid != runtimeapi.NamespaceMode_CONTAINER {
		t.Errorf("namespace options not reported: %v", s.Linux)
	}

	// The kubelet creates containers with the image ID PullImage returned.
	ctrCfg := containerConfig("app", pulled.ImageRef)
	ctrCfg.Image.UserSpecifiedImage = "busybox"
	cr, err := c.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: ctrCfg, SandboxConfig: podCfg})
	noErr(t, err, "CreateContainer")
	id := cr.ContainerId
	cs, err := c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	noErr(t, err, "ContainerStatus")
	st0 := cs.Status
	if st0.State != runtimeapi.ContainerState_CONTAINER_CREATED || st0.CreatedAt <= 0 || st0.StartedAt != 0 || st0.FinishedAt != 0 {
		t.Fatalf("created container status = %v", st0)
	}
	if st0.Image.Image != "docker.io/library/busybox:latest" || st0.Image.UserSpecifiedImage != "busybox" ||
		st0.ImageId != pulled.ImageRef || st0.ImageRef == "" || st0.ImageRef == pulled.ImageRef {
		t.Errorf("image fields = image %v, image_ref %q, image_id %q", st0.Image, st0.ImageRef, st0.ImageId)
	}
	if st0.LogPath != "/var/log/pods/default_web_uid-1/app/0.log" || st0.Metadata.Name != "app" ||
		st0.Labels["io.kubernetes.container.name"] != "app" || st0.Annotations["io.kubernetes.container.restartCount"] != "0" {
		t.Errorf("log path/metadata/labels/annotations = %q %v %v %v", st0.LogPath, st0.Metadata, st0.Labels, st0.Annotations)
	}

	_, err = c.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	noErr(t, err, "StartContainer")
	cs, err = c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	noErr(t, err, "ContainerStatus")
	if cs.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING || cs.Status.StartedAt < cs.Status.CreatedAt {
		t.Fatalf("started container status = %v", cs.Status)
	}
	list, err := c.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sbID}})
	noErr(t, err, "ListContainers")
	if len(list.Containers) != 1 || list.Containers[0].Id != id || list.Containers[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING ||
		list.Containers[0].ImageId != pulled.ImageRef {
		t.Fatalf("ListContainers = %v", list.Containers)
	}
	ex, err := c.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"true"}})
	noErr(t, err, "ExecSync")
	if ex.ExitCode != 0 {
		t.Errorf("ExecSync exit code %d", ex.ExitCode)
	}
	in := simInfo(t, ctx, clientStatus(c))
	if in.Sandboxes != 1 || in.ReadySandboxes != 1 || in.Containers != 1 || in.Running != 1 || in.Images != 1 || in.PodIPsInUse != 1 {
		t.Errorf("info while running = %+v", in)
	}

	_, err = c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30})
	noErr(t, err, "StopContainer")
	cs, err = c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	noErr(t, err, "ContainerStatus")
	if got := cs.Status; got.State != runtimeapi.ContainerState_CONTAINER_EXITED || got.ExitCode != 0 || got.Reason != "Completed" || got.FinishedAt < got.StartedAt {
		t.Fatalf("stopped container status = %v", got)
	}
	_, err = c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30})
	noErr(t, err, "StopContainer again")

	_, err = c.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	noErr(t, err, "RemoveContainer")
	_, err = c.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	wantCode(t, err, codes.NotFound, "ContainerStatus of removed container")
	_, err = c.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	noErr(t, err, "RemoveContainer again")
	_, err = c.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id})
	noErr(t, err, "StopContainer of removed container")

	for i := 0; i < 2; i++ {
		_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbID})
		noErr(t, err, "StopPodSandbox")
	}
	sbs, err = c.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbID})
	noErr(t, err, "PodSandboxStatus")
	if sbs.Status.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Fatalf("sandbox state after stop = %v", sbs.Status.State)
	}
	_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: "unknown"})
	noErr(t, err, "StopPodSandbox of unknown sandbox")
	for i := 0; i < 2; i++ {
		_, err = c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sbID})
		noErr(t, err, "RemovePodSandbox")
	}
	_, err = c.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbID})
	wantCode(t, err, codes.NotFound, "PodSandboxStatus of removed sandbox")

	in = simInfo(t, ctx, clientStatus(c))
	if in.Sandboxes != 0 || in.Containers != 0 || in.Running != 0 || in.PodIPsInUse != 0 || len(in.Violations) != 0 || in.ViolationCount != 0 {
		t.Errorf("info at the end = %+v", in)
	}
}

// TestRemovePodSandboxForcesEverything removes a READY sandbox with a
// running and a created container in one call.
func TestRemovePodSandboxForcesEverything(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "nginx:1.27")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	running := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "nginx:1.27"))
	startContainer(t, ctx, rt, running)
	created := createContainer(t, ctx, rt, sb, cfg, containerConfig("b", "docker.io/library/nginx:1.27"))

	_, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "RemovePodSandbox")
	for _, id := range []string{running, created} {
		_, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		wantCode(t, err, codes.NotFound, "ContainerStatus after RemovePodSandbox")
	}
	if in := rt.Info(); in.Sandboxes != 0 || in.Containers != 0 || in.Running != 0 || in.PodIPsInUse != 0 || in.ReadySandboxes != 0 {
		t.Fatalf("info = %+v", in)
	}
	// The names are free again: the same attempt can be run anew.
	sb2 := runPod(t, ctx, rt, cfg)
	createContainer(t, ctx, rt, sb2, cfg, containerConfig("a", "nginx:1.27"))
}

// TestStopPodSandboxKillsContainers checks exit code 137 / "Error" for
// containers killed by StopPodSandbox, and that created ones stay CREATED
// and can no longer start.
func TestStopPodSandboxKillsContainers(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	running := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "busybox"))
	startContainer(t, ctx, rt, running)
	created := createContainer(t, ctx, rt, sb, cfg, containerConfig("b", "busybox"))

	_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb})
	noErr(t, err, "StopPodSandbox")
	if st := containerStatus(t, ctx, rt, running); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 137 || st.Reason != "Error" {
		t.Errorf("killed container = %v", st)
	}
	if st := containerStatus(t, ctx, rt, created); st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Errorf("created container = %v", st)
	}
	resp := sandboxStatus(t, ctx, rt, sb)
	if len(resp.ContainersStatuses) != 2 || resp.Timestamp <= 0 {
		t.Errorf("PodSandboxStatus containers = %d, timestamp %d", len(resp.ContainersStatuses), resp.Timestamp)
	}
	_, err = rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created})
	wantCode(t, err, codes.FailedPrecondition, "StartContainer in a stopped sandbox")
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("c", "busybox")})
	wantCode(t, err, codes.FailedPrecondition, "CreateContainer in a stopped sandbox")
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: "nope", Config: containerConfig("c", "busybox")})
	wantCode(t, err, codes.NotFound, "CreateContainer in an unknown sandbox")
}

// TestRemoveRunningContainer: containerd semantics, the container is
// killed (137) and removed.
func TestRemoveRunningContainer(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	id := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "busybox"))
	startContainer(t, ctx, rt, id)
	_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	noErr(t, err, "RemoveContainer")
	if in := rt.Info(); in.Containers != 0 || in.Running != 0 {
		t.Fatalf("info = %+v", in)
	}
}

// TestNameReservation: a sandbox or container attempt cannot be created
// twice while the first exists (containerd's name index).
func TestNameReservation(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	_, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	wantCode(t, err, codes.AlreadyExists, "second RunPodSandbox with the same attempt")
	createContainer(t, ctx, rt, sb, cfg, containerConfig("a", "busybox"))
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("a", "busybox")})
	wantCode(t, err, codes.AlreadyExists, "second CreateContainer with the same attempt")
	next := containerConfig("a", "busybox")
	next.Metadata.Attempt = 1
	createContainer(t, ctx, rt, sb, cfg, next)
	if in := rt.Info(); in.Sandboxes != 1 || in.Containers != 2 || in.ViolationCount != 0 {
		t.Fatalf("info = %+v", in)
	}
}

// TestInvalidRequests covers argument validation.
func TestInvalidRequests(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{RuntimeHandlers: []string{"kata"}})
	pull(t, ctx, rt, "busybox")
	_, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{})
	wantCode(t, err, codes.InvalidArgument, "RunPodSandbox without config")
	_, err = rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "u", 0), RuntimeHandler: "runsc"})
	wantCode(t, err, codes.InvalidArgument, "RunPodSandbox with an unknown handler")
	cfg := podConfig("p", "u", 0)
	resp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: "kata"})
	noErr(t, err, "RunPodSandbox with a configured handler")
	sb := resp.PodSandboxId
	if got := sandboxStatus(t, ctx, rt, sb).Status.RuntimeHandler; got != "kata" {
		t.Errorf("runtime handler = %q", got)
	}
	for _, env := range [][]string{{EnvExitAfter, "soon"}, {EnvExitCode, "x"}, {EnvStopDelay, "-1s"}, {EnvExecExitCode, "1.5"}} {
		_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("a", "busybox", env...)})
		wantCode(t, err, codes.InvalidArgument, "CreateContainer with "+env[0]+"="+env[1])
	}
	_, err = rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: &runtimeapi.ContainerConfig{}})
	wantCode(t, err, codes.InvalidArgument, "CreateContainer without metadata")
	_, err = rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: "nope"})
	wantCode(t, err, codes.NotFound, "StartContainer of an unknown container")
	if in := rt.Info(); in.Containers != 0 || in.ViolationCount != 0 {
		t.Fatalf("info = %+v", in)
	}
}

// TestRunPodSandboxScriptedError: a pod annotated with
// AnnotationRunPodSandboxError never gets a sandbox; the error is Unknown
// with the annotation's message, and nothing is left behind.
func TestRunPodSandboxScriptedError(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	cfg := podConfig("p", "u", 0)
	cfg.Annotations = map[string]string{AnnotationRunPodSandboxError: "failed to set up network: plugin exploded"}
	for range 2 {
		_, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
		wantCode(t, err, codes.Unknown, "RunPodSandbox of an annotated pod")
		if !errors.Is(err, ErrScripted) || !strings.Contains(err.Error(), "plugin exploded") {
			t.Fatalf("err = %v, want ErrScripted with the annotation's message", err)
		}
	}
	if in := rt.Info(); in.Sandboxes != 0 || in.ViolationCount != 0 {
		t.Fatalf("info = %+v", in)
	}
	runPod(t, ctx, rt, podConfig("q", "v", 0)) // others are unaffected
}
