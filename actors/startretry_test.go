package actors

import (
	"context"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
)

// A start whose reply was lost may have taken effect: its retry looks the
// container up and never calls StartContainer a second time, whether the
// container still runs or has exited since.
func TestStartRetryNeverStartsTwice(t *testing.T) {
	rt, client := newSim(t)
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
	d := &Deps{Runtime: client}
	d.withDefaults()
	a := &containerActor{uid: "uid-p", deps: d}
	for i, stop := range []bool{false, true} {
		id, err := client.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: uint32(i + 1)},
			Image: &runtimeapi.ImageSpec{Image: "img:1"}}, sbCfg)
		if err != nil {
			t.Fatal(err)
		}
		// The first try took effect; its reply was lost.
		if err := client.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		if stop {
			if err := client.StopContainer(ctx, id, 0); err != nil {
				t.Fatal(err)
			}
		}
		res, err := a.run(ctx, &runEffect{effect: lifecycle.StartContainer{Name: "app", Attempt: uint32(i + 1), ID: id}, retry: true})
		if err != nil || res.GetFailed() || res.GetStartedAtUnixNano() == 0 {
			t.Fatalf("retried start (exited %v): %v, result %v", stop, err, res)
		}
	}
	if v := rt.Info().Violations; len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}
