package probe

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeExec answers ExecSync with resp or err, and records the calls.
type fakeExec struct {
	mu       sync.Mutex
	resp     *runtimeapi.ExecSyncResponse
	err      error
	calls    []string // containerID + " " + command
	timeouts []time.Duration
}

func (f *fakeExec) ExecSync(_ context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, id+" "+strings.Join(cmd, " "))
	f.timeouts = append(f.timeouts, timeout)
	return f.resp, f.err
}

func execHandler(cmd ...string) corev1.ProbeHandler {
	return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}
}

func TestExecProbe(t *testing.T) {
	fe := &fakeExec{}
	r := &Runner{Exec: fe}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		resp *runtimeapi.ExecSyncResponse
		err  error
		want Result
		msg  string
	}{
		{"exit 0", &runtimeapi.ExecSyncResponse{Stdout: []byte("ok\n")}, nil, Success, "ok"},
		{"exit 1", &runtimeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte("broken")}, nil, Failure, "broken"},
		{"exit 2 silent", &runtimeapi.ExecSyncResponse{ExitCode: 2}, nil, Failure, `command ["check"] exited with 2`},
		{"timeout", nil, status.Error(codes.DeadlineExceeded, "exec timed out"), Failure, `command ["check"] timed out after 3s`},
		{"runtime error", nil, errors.New("container not running"), Unknown, `exec ["check"] in container "cid-1": container not running`},
	} {
		fe.resp, fe.err = tc.resp, tc.err
		res, msg := r.Probe(ctx, target("10.0.0.1"), execHandler("check"), 3*time.Second)
		if res != tc.want || msg != tc.msg {
			t.Errorf("%s: got %v %q, want %v %q", tc.name, res, msg, tc.want, tc.msg)
		}
	}
	if fe.calls[0] != "cid-1 check" || fe.timeouts[0] != 3*time.Second {
		t.Errorf("ExecSync called with %q timeout %v", fe.calls[0], fe.timeouts[0])
	}
	// Default timeout.
	_, _ = r.Probe(ctx, target(""), execHandler("check"), 0)
	if got := fe.timeouts[len(fe.timeouts)-1]; got != DefaultTimeout {
		t.Errorf("default timeout = %v", got)
	}
}
