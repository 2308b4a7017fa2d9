package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/node/agent"
)

// source is the embedded pod source the benchmarks drive.
const source = "bench"

// benchImage is every benchmark container's image.
const benchImage = "registry.k8s.io/pause:3.10"

// simNode is one simulated runtime in process, connected as sim:// is
// (sim.Direct: calls without gRPC), with the client's unary calls counted.
type simNode struct {
	rt     *sim.Runtime
	client *cri.Client
	calls  *countingConn
	stop   func()
}

func newSimNode(b *testing.B) *simNode {
	b.Helper()
	rt, err := sim.New(sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	conn, stop := sim.Direct(rt, nil)
	calls := &countingConn{ClientConnInterface: conn, byMethod: map[string]int{}}
	client := cri.NewFromConn(calls, calls, cri.Options{Timeout: time.Minute})
	return &simNode{rt: rt, client: client, calls: calls, stop: stop}
}

// countingConn counts the unary CRI calls made through it (streams, that
// is GetContainerEvents, are passed through uncounted) and remembers when
// the last one ended, so that a benchmark can tell when an agent has
// stopped talking to the runtime.
type countingConn struct {
	grpc.ClientConnInterface
	inflight atomic.Int64
	lastEnd  atomic.Int64 // UnixNano

	mu       sync.Mutex
	byMethod map[string]int // calls started, by short method name
}

func (c *countingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.inflight.Add(1)
	c.mu.Lock()
	c.byMethod[path.Base(method)]++
	c.mu.Unlock()
	defer func() {
		c.lastEnd.Store(time.Now().UnixNano())
		c.inflight.Add(-1)
	}()
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// takeCounts returns the calls by method since the last takeCounts and
// their total, and starts counting afresh.
func (c *countingConn) takeCounts() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, total := c.byMethod, 0
	for _, n := range m {
		total += n
	}
	c.byMethod = map[string]int{}
	return m, total
}

// waitQuiet waits until no call has been in flight for quiet and returns
// when the last call ended. It polls every quietPoll: quiescence is the
// absence of events, which no channel announces.
func (c *countingConn) waitQuiet(ctx context.Context, quiet time.Duration) (time.Time, error) {
	tick := time.NewTicker(quietPoll)
	defer tick.Stop()
	for {
		last := time.Unix(0, c.lastEnd.Load())
		if c.inflight.Load() == 0 && time.Since(last) >= quiet {
			return last, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("waiting for the agent to stop calling the runtime (%d calls in flight): %w", c.inflight.Load(), ctx.Err())
		}
	}
}

// quietPoll is waitQuiet's polling interval.
const quietPoll = 20 * time.Millisecond

// close disconnects and closes the runtime; its pods are gone with it.
func (n *simNode) close() {
	_ = n.client.Close()
	n.stop()
	_ = n.rt.Close()
}

// checkViolations fails b if the runtime saw CRI misuse.
func (n *simNode) checkViolations(b *testing.B) {
	b.Helper()
	if info := n.rt.Info(); info.ViolationCount > 0 {
		b.Fatalf("CRI misuse seen by the simulated runtime (%d): %v", info.ViolationCount, info.Violations)
	}
}

// node is one running agent with the registry its metrics are on (the
// benchmarks read the pod gauges from it).
type node struct {
	agent *agent.Agent
	reg   *prometheus.Registry
}

// startAgent starts an agent on root and the runtime of n, with pods as
// the first desired set of source (nil: none). The journal is the real one
// (bbolt file in root, fsync on every commit). Only errors are logged, to
// stderr.
func (n *simNode) startAgent(ctx context.Context, root string, pods []*corev1.Pod) (*node, error) {
	reg := prometheus.NewRegistry()
	opts := []agent.Option{
		agent.WithNodeName("bench-node"), agent.WithRootDir(root), agent.WithRuntime(n.client, sim.DefaultRuntimeName),
		agent.WithLogger(errorLogger()), agent.WithMetrics(reg, nil),
		agent.WithActorOptions(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		})),
	}
	if pods != nil {
		opts = append(opts, agent.WithPods(source, pods))
	}
	a, err := agent.Start(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("start agent on %s: %w", root, err)
	}
	return &node{agent: a, reg: reg}, nil
}

func errorLogger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zap.ErrorLevel))
}

// benchPods returns n pods of one container each (restartPolicy Always,
// imagePullPolicy IfNotPresent), with UUID-shaped UIDs so that per-pod
// sizes are realistic.
func benchPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		name := fmt.Sprintf("bench-%05d", i)
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: "bench", UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)),
				Labels: map[string]string{"app": "bench"},
			},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyAlways,
				Containers: []corev1.Container{{
					Name: "app", Image: benchImage, ImagePullPolicy: corev1.PullIfNotPresent,
				}},
			},
		}
	}
	return pods
}

// waitRunning waits until the node's status cache holds want pods in phase
// Running and want running containers (every benchmark pod has exactly one
// container, so that is every pod Running with its container Running). It
// is woken by the cache's Subscribe and checks the cache's gauges, which
// costs the same for 10 pods as for 10,000; it never sleeps.
func (nd *node) waitRunning(ctx context.Context, want int) error {
	ch, unsubscribe := nd.agent.Statuses().Subscribe()
	defer unsubscribe()
	for {
		pods, containers, err := runningCounts(nd.reg)
		if err != nil {
			return err
		}
		if pods == want && containers == want {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d pods Running: %d pods Running, %d containers running: %w", want, pods, containers, ctx.Err())
		}
	}
}

// runningCounts reads actorlet_pods{phase="Running"} and
// kubelet_running_containers{container_state="running"}.
func runningCounts(g prometheus.Gatherer) (pods, containers int, err error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0, fmt.Errorf("gather pod metrics: %w", err)
	}
	for _, mf := range mfs {
		var label, value string
		switch mf.GetName() {
		case "actorlet_pods":
			label, value = "phase", string(corev1.PodRunning)
		case "kubelet_running_containers":
			label, value = "container_state", "running"
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					if mf.GetName() == "actorlet_pods" {
						pods = int(m.GetGauge().GetValue())
					} else {
						containers = int(m.GetGauge().GetValue())
					}
				}
			}
		}
	}
	return pods, containers, nil
}

// runningContainer is what verifyRunning saw of one pod's container.
type runningContainer struct {
	id       string
	restarts int32
}

// verifyRunning checks pod by pod (through Get, not the gauges) that every
// pod is Running with its container Running, and returns the containers.
func (nd *node) verifyRunning(pods []*corev1.Pod) (map[string]runningContainer, error) {
	out := make(map[string]runningContainer, len(pods))
	for _, p := range pods {
		uid := string(p.UID)
		st, ok := nd.agent.Statuses().Get(uid)
		if !ok {
			return nil, fmt.Errorf("pod %s: no status", uid)
		}
		if st.Status.Phase != corev1.PodRunning {
			return nil, fmt.Errorf("pod %s: phase %q, want Running", uid, st.Status.Phase)
		}
		if len(st.Status.ContainerStatuses) != 1 || st.Status.ContainerStatuses[0].State.Running == nil {
			return nil, fmt.Errorf("pod %s: container not running: %+v", uid, st.Status.ContainerStatuses)
		}
		cs := st.Status.ContainerStatuses[0]
		out[uid] = runningContainer{id: cs.ContainerID, restarts: cs.RestartCount}
	}
	return out, nil
}

// liveHeap is the live heap after two full collections (the second one
// frees what finalizers of the first released).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
