package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Hook runs a postStart or preStop handler to completion, bounded by ctx
// only (the caller gives preStop the termination grace period), and
// returns its output:
//   - exec: ExecSync without timeout; a non-zero exit is an error naming
//     the command, its exit code and output;
//   - httpGet: the host defaults to the pod IP, port 0 to 80; a status
//     outside 200..399 is an error;
//   - sleep: waits the seconds on Runner.Clock, or until ctx ends (an
//     error).
//
// tcpSocket and an empty handler are errors (the kubelet does not run
// them either).
func (r *Runner) Hook(ctx context.Context, t Target, h *corev1.LifecycleHandler) (string, error) {
	switch {
	case h == nil:
		return "", errors.New("no lifecycle handler")
	case h.Exec != nil:
		return r.execHook(ctx, t, h.Exec.Command)
	case h.HTTPGet != nil:
		return r.httpHook(ctx, t, h.HTTPGet)
	case h.Sleep != nil:
		return "", r.sleepHook(ctx, t, time.Duration(h.Sleep.Seconds)*time.Second)
	case h.TCPSocket != nil:
		return "", fmt.Errorf("container %q: tcpSocket lifecycle handlers are not supported", t.name())
	}
	return "", fmt.Errorf("container %q: lifecycle handler has no action", t.name())
}

func (r *Runner) execHook(ctx context.Context, t Target, cmd []string) (string, error) {
	if r.Exec == nil {
		return "", fmt.Errorf("exec hook %q of container %q: no Exec configured", cmd, t.name())
	}
	resp, err := r.Exec.ExecSync(ctx, t.ContainerID, cmd, 0)
	if err != nil {
		return "", fmt.Errorf("exec hook %q of container %q (%s): %w", cmd, t.name(), t.ContainerID, err)
	}
	out := output(resp.GetStdout(), resp.GetStderr())
	if code := resp.GetExitCode(); code != 0 {
		return out, fmt.Errorf("exec hook %q of container %q exited with %d: %s", cmd, t.name(), code, out)
	}
	return out, nil
}

func (r *Runner) sleepHook(ctx context.Context, t Target, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := r.clock().NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sleep hook of container %q cut short: %w", t.name(), ctx.Err())
	}
}
