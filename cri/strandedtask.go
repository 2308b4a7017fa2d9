package cri

import (
	"context"
	"syscall"

	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"google.golang.org/grpc/metadata"
)

// Stranded tasks: containerd's CRI plugin can hold a container as EXITED
// while containerd still holds a task for it, which no CRI call removes.
//
// A StartContainer whose client goes away (actorlet killed, the call's
// context cancelled) can be cut inside containerd's task creation after the
// shim has created the task (containerd v2.4.2
// plugins/services/tasks/local.go, (*local).Create: the task exists once
// rtime.Create returns, and the c.PID(ctx) that follows fails with the
// cancelled context). internal/cri/server/container_start.go,
// StartContainer, then records the container as EXITED (StartError, exit
// 128, "failed to create containerd task: failed to get task pid: context
// canceled") without deleting the task: its cleanup is deferred only once
// NewTask has returned a task. From then on:
//   - StopContainer does nothing: container_stop.go, stopContainer, acts
//     only on RUNNING and UNKNOWN containers;
//   - RemoveContainer, and RemovePodSandbox which removes the sandbox's
//     containers, fail with FailedPrecondition: container_remove.go
//     forcibly stops only RUNNING and UNKNOWN containers, then
//     client/container.go, (*container).Delete, refuses any container that
//     still has a task ("cannot delete running task");
//   - no exit ends the task by itself: the task's process was created, not
//     started (runc waits for a start that never comes), and containerd
//     restarts are the only CRI-side path that deletes it (restart.go).
//
// This is containerd issue #11037; the maintainers' word there is that the
// caller cleans up the task before deleting the container. The kubelet has
// no such step (its pod is stuck terminating).
//
// EndStrandedTask is that step, for a container the caller is removing
// anyway: it kills the task's processes through containerd's own task
// service on the same socket, waits for them to exit and deletes the task.
// containerd's CRI plugin sees the exit as any other (its TaskExit handler)
// and the next RemoveContainer succeeds.

// containerdCRINamespace is the containerd namespace the CRI plugin keeps
// its containers in (fixed in containerd, constants.K8sContainerdNamespace).
const containerdCRINamespace = "k8s.io"

// containerdNamespaceHeader is the gRPC metadata key that names the
// containerd namespace of a call (containerd's namespaces.GRPCHeader).
const containerdNamespaceHeader = "containerd-namespace"

// EndStrandedTask kills, waits for and deletes the containerd task of
// container id, which the caller is removing: for a container that
// containerd's CRI reports EXITED and RemoveContainer still refuses with
// FailedPrecondition (see above). It is idempotent: no task is success. It
// never starts anything. A runtime that is not containerd answers with an
// error of Kind Unimplemented (or Unavailable through a CRI-only proxy).
//
// Guarantees: every call runs under the client's per-call deadline; errors
// are *Error naming the task call and the container.
func (c *Client) EndStrandedTask(ctx context.Context, id string) error {
	ctx = metadata.AppendToOutgoingContext(ctx, containerdNamespaceHeader, containerdCRINamespace)
	err := c.call(ctx, "containerd Tasks.Kill", id, c.timeout, func(ctx context.Context) error {
		_, err := c.tasks.Kill(ctx, &tasksapi.KillRequest{ContainerID: id, Signal: uint32(syscall.SIGKILL), All: true})
		return err
	})
	switch KindOf(err) {
	case OK, FailedPrecondition: // killed, or its process has already exited
	case NotFound:
		return nil // no task: nothing stranded
	default:
		return err
	}
	err = c.call(ctx, "containerd Tasks.Wait", id, c.timeout, func(ctx context.Context) error {
		_, err := c.tasks.Wait(ctx, &tasksapi.WaitRequest{ContainerID: id})
		return err
	})
	if err != nil && KindOf(err) != NotFound {
		return err
	}
	return idempotent(c.call(ctx, "containerd Tasks.Delete", id, c.timeout, func(ctx context.Context) error {
		_, err := c.tasks.Delete(ctx, &tasksapi.DeleteTaskRequest{ContainerID: id})
		return err
	}))
}
