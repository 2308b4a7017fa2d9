package sim

import (
	"os"
	"path/filepath"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ReopenContainerLog leaves a (new, empty) file at the container's log
// path, as a runtime does after the log was renamed for rotation.
func TestReopenContainerLogCreatesTheFile(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	img := pull(t, ctx, rt, "busybox")
	cfg := podConfig("web", "uid-1", 0)
	cfg.LogDirectory = t.TempDir()
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	noErr(t, err, "RunPodSandbox")
	if err := os.MkdirAll(filepath.Join(cfg.LogDirectory, "app"), 0o750); err != nil {
		t.Fatal(err)
	}
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId,
		Config: containerConfig("app", img), SandboxConfig: cfg})
	noErr(t, err, "CreateContainer")
	_, err = rt.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: c.ContainerId})
	noErr(t, err, "ReopenContainerLog")
	if fi, err := os.Stat(filepath.Join(cfg.LogDirectory, "app", "0.log")); err != nil || fi.Size() != 0 {
		t.Fatalf("log file after reopen: %v, %v", fi, err)
	}
}
