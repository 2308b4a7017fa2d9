package actors

import (
	"context"
	"errors"
	"sync"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
)

// A container the journal holds as dead may still run (a start whose
// reply a crash lost took effect): removing it kills it first, and so does
// removing its sandbox.
func TestRemoveKillsWhatStillRuns(t *testing.T) {
	_, client := newSim(t)
	ctx := context.Background()
	sb, sbCfg := simSandbox(t, client)
	id, err := client.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	strict := refusesRunning{Runtime: client}
	if err := strict.RemoveContainer(ctx, id); cri.KindOf(err) != cri.FailedPrecondition {
		t.Fatalf("removing a running container: %v, want FailedPrecondition", err)
	}
	d := &Deps{Runtime: strict}
	d.withDefaults()
	a := &containerActor{uid: "uid-p", deps: d}
	if _, err := a.run(ctx, &runEffect{effect: lifecycle.RemoveContainer{Name: "app", ID: id}}); err != nil {
		t.Fatalf("RemoveContainer of a running container: %v", err)
	}
	if _, err := client.ContainerStatus(ctx, id); cri.KindOf(err) != cri.NotFound {
		t.Fatalf("the container is still there: %v", err)
	}
}

// refusesRunning refuses to remove a running container, as containerd
// does ("cannot delete running task"); the simulated runtime removes it.
type refusesRunning struct{ Runtime }

func (r refusesRunning) RemoveContainer(ctx context.Context, id string) error {
	if st, err := r.Runtime.ContainerStatus(ctx, id); err == nil && st.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
		return &cri.Error{Op: "RemoveContainer", ID: id, Kind: cri.FailedPrecondition, Err: errors.New("cannot delete running task")}
	}
	return r.Runtime.RemoveContainer(ctx, id)
}

// A container the runtime reports exited but will not remove, because its
// task outlived a start cut by a crash (containerd: StartContainer cut
// inside its task creation, see cri.Client.EndStrandedTask): StopContainer
// changes nothing, so removing it ends its task through the runtime's task
// service first, and so does removing its sandbox, which fails on it too.
func TestRemoveEndsStrandedTask(t *testing.T) {
	for _, via := range []string{"container", "sandbox"} {
		t.Run(via, func(t *testing.T) {
			_, client := newSim(t)
			ctx := context.Background()
			sb, id := podContainer(t, client, true)
			rt := &strandedTasks{Runtime: client, stranded: map[string]bool{id: true}}
			if err := rt.RemoveContainer(ctx, id); cri.KindOf(err) != cri.FailedPrecondition {
				t.Fatalf("removing the stranded container: %v, want FailedPrecondition", err)
			}
			d := &Deps{Runtime: rt}
			d.withDefaults()
			a := &containerActor{uid: "uid-p", deps: d}
			var effect lifecycle.Effect = lifecycle.RemoveContainer{Name: "app", ID: id}
			if via == "sandbox" {
				if err := client.StopPodSandbox(ctx, sb); err != nil {
					t.Fatal(err)
				}
				effect = lifecycle.RemoveSandbox{ID: sb}
			}
			if res, err := a.run(ctx, &runEffect{effect: effect}); err != nil {
				t.Fatalf("%s: %v (%s)", effect.Key(), err, res.GetReason())
			}
			if _, err := client.ContainerStatus(ctx, id); cri.KindOf(err) != cri.NotFound {
				t.Fatalf("the container is still there: %v", err)
			}
			if via == "sandbox" {
				if _, err := client.PodSandboxStatus(ctx, sb); cri.KindOf(err) != cri.NotFound {
					t.Fatalf("the sandbox is still there: %v", err)
				}
			}
			if len(rt.ended) != 1 || rt.ended[0] != id {
				t.Fatalf("tasks ended: %v, want [%s]", rt.ended, id)
			}
		})
	}
}

// Without a task service (a runtime that is not containerd), a container
// the runtime will not remove stays, and the failure says why: the effect
// fails with the runtime's FailedPrecondition, to be retried.
func TestRemoveStrandedWithoutTaskService(t *testing.T) {
	_, client := newSim(t)
	ctx := context.Background()
	_, id := podContainer(t, client, true)
	rt := &strandedTasks{Runtime: client, stranded: map[string]bool{id: true}}
	d := &Deps{Runtime: noTaskService{rt}}
	d.withDefaults()
	a := &containerActor{uid: "uid-p", deps: d}
	res, err := a.run(ctx, &runEffect{effect: lifecycle.RemoveContainer{Name: "app", ID: id}})
	if cri.KindOf(err) != cri.FailedPrecondition || res.GetReason() != "RemoveContainerError" {
		t.Fatalf("removing a stranded container without a task service: %v (%s), want RemoveContainerError, FailedPrecondition", err, res.GetReason())
	}
	if len(rt.ended) != 0 {
		t.Fatalf("tasks ended: %v", rt.ended)
	}
	if _, err := client.ContainerStatus(ctx, id); err != nil {
		t.Fatalf("the container: %v, want it still there", err)
	}
}

// A running container the runtime refuses to remove is stopped through the
// CRI, never through the task service: that is only for one the runtime
// reports exited.
func TestRemoveRunningDoesNotEndTasks(t *testing.T) {
	_, client := newSim(t)
	ctx := context.Background()
	_, id := podContainer(t, client, false)
	rt := &strandedTasks{Runtime: refusesRunning{Runtime: client}, stranded: map[string]bool{}}
	d := &Deps{Runtime: rt}
	d.withDefaults()
	a := &containerActor{uid: "uid-p", deps: d}
	if _, err := a.run(ctx, &runEffect{effect: lifecycle.RemoveContainer{Name: "app", ID: id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.ContainerStatus(ctx, id); cri.KindOf(err) != cri.NotFound {
		t.Fatalf("the container is still there: %v", err)
	}
	if len(rt.ended) != 0 {
		t.Fatalf("tasks ended: %v, want none", rt.ended)
	}
}

// podContainer runs a sandbox with one container that started and, if
// exited, has exited; it returns their IDs.
func podContainer(t *testing.T, client *cri.Client, exited bool) (sandboxID, id string) {
	t.Helper()
	ctx := context.Background()
	sb, sbCfg := simSandbox(t, client)
	id, err := client.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !exited {
		return sb, id
	}
	if err := client.StopContainer(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if st, err := client.ContainerStatus(ctx, id); err != nil || st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("container %s: %v %v, want exited", id, st.GetState(), err)
	}
	return sb, id
}

// strandedTasks is a runtime that reports the stranded containers exited
// but refuses to remove them, or their sandbox, until their task is ended
// (EndStrandedTask), as containerd does for a container whose task outlived
// a cut start. It counts the tasks it ended.
type strandedTasks struct {
	Runtime
	mu       sync.Mutex
	stranded map[string]bool
	ended    []string
}

func (r *strandedTasks) isStranded(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stranded[id]
}

func (r *strandedTasks) RemoveContainer(ctx context.Context, id string) error {
	if r.isStranded(id) {
		return &cri.Error{Op: "RemoveContainer", ID: id, Kind: cri.FailedPrecondition, Err: errors.New("cannot delete running task " + id)}
	}
	return r.Runtime.RemoveContainer(ctx, id)
}

func (r *strandedTasks) RemovePodSandbox(ctx context.Context, id string) error {
	list, err := r.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: id})
	if err != nil {
		return err
	}
	for _, c := range list {
		if r.isStranded(c.GetId()) {
			return &cri.Error{Op: "RemovePodSandbox", ID: id, Kind: cri.FailedPrecondition, Err: errors.New("cannot delete running task " + c.GetId())}
		}
	}
	return r.Runtime.RemovePodSandbox(ctx, id)
}

func (r *strandedTasks) EndStrandedTask(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stranded, id)
	r.ended = append(r.ended, id)
	return nil
}

// noTaskService hides EndStrandedTask: a runtime that is not containerd.
type noTaskService struct{ Runtime }

// simSandbox runs pod uid-p's sandbox on the simulated runtime and pulls
// img:1 for its containers.
func simSandbox(t *testing.T, client *cri.Client) (string, *runtimeapi.PodSandboxConfig) {
	t.Helper()
	ctx := context.Background()
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "uid-p"},
		Labels: map[string]string{cri.LabelPodUID: "uid-p"}}
	sb, err := client.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PullImage(ctx, &runtimeapi.ImageSpec{Image: "img:1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	return sb, sbCfg
}
