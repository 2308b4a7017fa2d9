package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// execGrace is how much longer than the command's timeout ExecSync may
// take before the probe gives up on the runtime.
const execGrace = 2 * time.Second

// execProbe runs cmd with ExecSync: exit 0 is Success, another exit code
// or a timeout Failure; any other error Unknown (the kubelet throws such
// results away).
func (r *Runner) execProbe(ctx context.Context, t Target, cmd []string, timeout time.Duration) (Result, string) {
	if r.Exec == nil {
		return Unknown, "exec probe: no Exec configured"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+execGrace)
	defer cancel()
	resp, err := r.Exec.ExecSync(ctx, t.ContainerID, cmd, timeout)
	if err != nil {
		if isTimeout(err) {
			return Failure, fmt.Sprintf("command %q timed out after %v", cmd, timeout)
		}
		return Unknown, fmt.Sprintf("exec %q in container %q: %v", cmd, t.ContainerID, err)
	}
	out := output(resp.GetStdout(), resp.GetStderr())
	if code := resp.GetExitCode(); code != 0 {
		if out == "" {
			return Failure, fmt.Sprintf("command %q exited with %d", cmd, code)
		}
		return Failure, out
	}
	return Success, out
}

// isTimeout reports whether err is a deadline, from the context or as a
// gRPC status.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// output joins stdout and stderr, as the kubelet's combined output.
func output(stdout, stderr []byte) string {
	return strings.TrimSpace(string(stdout) + string(stderr))
}
