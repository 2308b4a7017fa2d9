package stats

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
)

// simRuntime is actorlet's CRI client on an in-process simulated runtime, with the stats
// calls cri.Client does not have yet made on the same connection.
type simRuntime struct {
	*cri.Client
	rs   runtimeapi.RuntimeServiceClient
	sim  *sim.Runtime
	opts simRuntimeOpts
}

type simRuntimeOpts struct {
	noSandboxStats bool // ListPodSandboxStats answers Unimplemented
	noNanoCores    bool // container stats come without usageNanoCores
}

func newSimRuntime(t *testing.T, clk *clocktesting.FakeClock, opts simRuntimeOpts) *simRuntime {
	t.Helper()
	rt, err := sim.New(sim.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	conn, stop, err := sim.InProcess(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	client := cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second})
	t.Cleanup(func() { client.Close(); stop(); rt.Close() })
	return &simRuntime{Client: client, rs: runtimeapi.NewRuntimeServiceClient(conn), sim: rt, opts: opts}
}

func (s *simRuntime) ListPodSandboxStats(ctx context.Context, f *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	if s.opts.noSandboxStats {
		return nil, status.Error(codes.Unimplemented, "ListPodSandboxStats: not served")
	}
	resp, err := s.rs.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: f})
	return resp.GetStats(), err
}

func (s *simRuntime) ListContainerStats(ctx context.Context, f *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	resp, err := s.rs.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: f})
	if s.opts.noNanoCores {
		for _, c := range resp.GetStats() {
			c.Cpu.UsageNanoCores = nil
		}
	}
	return resp.GetStats(), err
}

// simPod is a pod run on the simulator the way actorlet runs it.
type simPod struct {
	name, uid, sandbox string
	cfg                *runtimeapi.PodSandboxConfig
	containers         map[string]string // name -> ID
}

// runPod runs a sandbox for namespace/name (attempt), labelled as actorlet labels it.
func (s *simRuntime) runPod(t *testing.T, namespace, name string, attempt uint32) *simPod {
	t.Helper()
	ctx := context.Background()
	uid := "uid-" + name
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid, Attempt: attempt},
		Labels: map[string]string{cri.LabelManaged: cri.ManagedValue, cri.LabelPodUID: uid,
			cri.LabelPodName: name, cri.LabelPodNamespace: namespace},
	}
	id, err := s.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return &simPod{name: name, uid: uid, sandbox: id, cfg: cfg, containers: map[string]string{}}
}

// start creates and starts a container with env (k, v pairs).
func (s *simRuntime) start(t *testing.T, p *simPod, name string, env ...string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.PullImage(ctx, &runtimeapi.ImageSpec{Image: "example/app:1"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: "example/app:1"},
		Labels: map[string]string{cri.LabelManaged: cri.ManagedValue, cri.LabelPodUID: p.uid,
			cri.LabelPodName: p.name, cri.LabelContainerName: name},
	}
	for i := 0; i+1 < len(env); i += 2 {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: env[i], Value: []byte(env[i+1])})
	}
	id, err := s.CreateContainer(ctx, p.sandbox, cfg, p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	p.containers[name] = id
	return id
}

// use runs a container with SIM_CPU_MILLICORES and SIM_MEMORY_BYTES set, and the same usage
// set with SetUsage (which is what applies while CreateContainer does not read the env).
func (s *simRuntime) use(t *testing.T, p *simPod, name string, milliCores, memoryBytes int64) string {
	t.Helper()
	id := s.start(t, p, name, sim.EnvCPUMilliCores, itoa(milliCores), sim.EnvMemoryBytes, itoa(memoryBytes))
	if err := s.sim.SetUsage(id, milliCores, memoryBytes); err != nil {
		t.Fatal(err)
	}
	return id
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
