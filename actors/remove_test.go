package actors

import (
	"context"
	"errors"
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
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "uid-p"},
		Labels: map[string]string{cri.LabelPodUID: "uid-p"}}
	sb, err := client.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PullImage(ctx, &runtimeapi.ImageSpec{Image: "img:1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
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
