package imagegc

import (
	"context"
	"slices"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
)

// simRuntime is a cri.Client plus the ImageFsInfo call it lacks.
type simRuntime struct {
	*cri.Client
	images runtimeapi.ImageServiceClient
}

func (s simRuntime) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	return s.images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
}

func newSim(t *testing.T) simRuntime {
	t.Helper()
	rt, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	client := cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { client.Close(); stop(); rt.Close() })
	return simRuntime{Client: client, images: runtimeapi.NewImageServiceClient(conn)}
}

// TestAgainstSimulator runs a pass against cri/sim through cri.Client: the
// image a created container uses is kept, an unused one goes, and the
// simulator's reported usage drops.
func TestAgainstSimulator(t *testing.T) {
	ctx := context.Background()
	rt := newSim(t)
	var refs []string
	for _, img := range []string{"busybox", "nginx:1.27", "redis:7"} {
		ref, err := rt.PullImage(ctx, &runtimeapi.ImageSpec{Image: img}, nil, nil)
		if err != nil {
			t.Fatalf("PullImage %s: %v", img, err)
		}
		refs = append(refs, ref)
	}
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "u1", Namespace: "default"}}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	_, err = rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "web"},
		Image:    &runtimeapi.ImageSpec{Image: "nginx:1.27"},
	}, sbCfg)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	before, err := rt.ImageFsInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	used := before.GetImageFilesystems()[0].GetUsedBytes().GetValue()

	h := newHarness(t, DefaultPolicy()) // for its clock
	var mountpoint string
	capacity := func(_ context.Context, mp string) (uint64, error) {
		mountpoint = mp
		return used * 100 / 86, nil // 86%: free about one 1 MiB image
	}
	m, err := New(rt, DefaultPolicy(), WithClock(h.clock), WithCapacity(capacity))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.GarbageCollect(ctx); err == nil {
		t.Fatal("first pass freed space from images younger than MinAge")
	}
	h.clock.Step(time.Hour)
	res, err := m.GarbageCollect(ctx)
	if err != nil {
		t.Fatalf("GarbageCollect: %v", err)
	}
	if len(res.Removed) != 1 || slices.Contains(ids(res.Removed), refs[1]) {
		t.Fatalf("removed %v; nginx is %s", ids(res.Removed), refs[1])
	}
	if mountpoint == "" {
		t.Error("capacity asked of no mountpoint")
	}
	after, err := rt.ImageFsInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.GetImageFilesystems()[0].GetUsedBytes().GetValue(); got != used-res.BytesFreed {
		t.Errorf("sim used bytes %d after freeing %d of %d", got, res.BytesFreed, used)
	}
	t.Logf("sim image fs %q: used %d bytes before, %d after", mountpoint, used, used-res.BytesFreed)
}
