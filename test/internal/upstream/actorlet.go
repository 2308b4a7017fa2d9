package upstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri"
)

// BuildActorlet builds cmd/actorlet into dir/bin and returns its path.
func BuildActorlet(tb testing.TB, dir string) string {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "bin", "actorlet")
	cmd := exec.Command(goCmd, "build", "-o", out, "github.com/actorlet/actorlet/cmd/actorlet")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

// StartSim serves a simulated runtime (`actorlet sim-runtime`, with the
// extra flags) as Nobody on a socket in dir, logging to dir/sim.log, and
// returns its endpoint once it answers (30 s at most).
func StartSim(tb testing.TB, actorlet, dir string, extra ...string) string {
	tb.Helper()
	MkdirNobody(tb, dir)
	endpoint := "unix://" + filepath.Join(dir, "sim.sock")
	args := []string{"--reuid=" + strconv.Itoa(Nobody), "--regid=" + strconv.Itoa(Nobody), "--clear-groups",
		actorlet, "sim-runtime", "--listen", endpoint}
	StartProc(tb, filepath.Join(dir, "sim.log"), "setpriv", append(args, extra...)...)
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := cri.Dial(ctx, endpoint, "", cri.Options{Timeout: time.Second})
		if err == nil {
			_, err = c.Version(ctx)
			c.Close()
			if err == nil {
				return endpoint
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("simulated runtime on %s: %v", endpoint, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a process we started, with a deadline
	}
}

// StartActorletNode runs `actorlet run` as the node name on the runtime at
// endpoint, with its defaults and the extra flags, logging to
// dir/actorlet.log.
func StartActorletNode(tb testing.TB, actorlet, dir, endpoint, name, kubeconfig string, extra ...string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	args := []string{"run",
		"--container-runtime-endpoint", endpoint,
		"--kubeconfig", kubeconfig,
		"--hostname-override", name,
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "logs"),
		"--healthz-port", "0"}
	StartProc(tb, filepath.Join(dir, "actorlet.log"), actorlet, append(args, extra...)...)
}
