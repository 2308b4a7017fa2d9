package cri

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// fakeTasks is containerd's task service for one task: it records the
// calls (with the namespace each named) and answers Kill with killErr.
type fakeTasks struct {
	tasksapi.UnimplementedTasksServer
	mu      sync.Mutex
	calls   []string
	killErr error
	kill    *tasksapi.KillRequest
}

func (f *fakeTasks) record(ctx context.Context, op string) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+"@"+firstOf(md.Get(containerdNamespaceHeader)))
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (f *fakeTasks) Kill(ctx context.Context, r *tasksapi.KillRequest) (*emptypb.Empty, error) {
	f.record(ctx, "Kill")
	f.mu.Lock()
	f.kill = r
	f.mu.Unlock()
	if f.killErr != nil {
		return nil, f.killErr
	}
	return &emptypb.Empty{}, nil
}

func (f *fakeTasks) Wait(ctx context.Context, r *tasksapi.WaitRequest) (*tasksapi.WaitResponse, error) {
	f.record(ctx, "Wait")
	return &tasksapi.WaitResponse{ExitStatus: 137}, nil
}

func (f *fakeTasks) Delete(ctx context.Context, r *tasksapi.DeleteTaskRequest) (*tasksapi.DeleteResponse, error) {
	f.record(ctx, "Delete")
	return &tasksapi.DeleteResponse{ID: r.ContainerID}, nil
}

// dialTasks serves tasks (nil: no task service, as a runtime that is not
// containerd) next to a fake CRI on one socket and dials it.
func dialTasks(t *testing.T, tasks *fakeTasks) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	if tasks != nil {
		tasksapi.RegisterTasksServer(srv, tasks)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	c, err := Dial(context.Background(), "unix://"+sock, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestEndStrandedTask(t *testing.T) {
	for _, tc := range []struct {
		name    string
		killErr error
		want    []string
	}{
		{"alive", nil, []string{"Kill@k8s.io", "Wait@k8s.io", "Delete@k8s.io"}},
		{"exited already", status.Error(codes.FailedPrecondition, "process already finished"), []string{"Kill@k8s.io", "Wait@k8s.io", "Delete@k8s.io"}},
		{"no task", status.Error(codes.NotFound, "no running task found"), []string{"Kill@k8s.io"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTasks{killErr: tc.killErr}
			c := dialTasks(t, f)
			if err := c.EndStrandedTask(context.Background(), "c1"); err != nil {
				t.Fatalf("EndStrandedTask: %v", err)
			}
			if !slices.Equal(f.calls, tc.want) {
				t.Fatalf("calls %v, want %v", f.calls, tc.want)
			}
			if k := f.kill; k.GetContainerID() != "c1" || k.GetSignal() != uint32(syscall.SIGKILL) || !k.GetAll() || k.GetExecID() != "" {
				t.Fatalf("kill request %v, want SIGKILL to all of c1's task", k)
			}
		})
	}
}

// A runtime without containerd's task service: the error says so by Kind
// and names the call and the container.
func TestEndStrandedTaskNotContainerd(t *testing.T) {
	c := dialTasks(t, nil)
	err := c.EndStrandedTask(context.Background(), "c1")
	var ce *Error
	if KindOf(err) != Unimplemented || !errors.As(err, &ce) || ce.ID != "c1" || ce.Op != "containerd Tasks.Kill" {
		t.Fatalf("EndStrandedTask on a runtime that is not containerd: %v, want Unimplemented from containerd Tasks.Kill on c1", err)
	}
}
