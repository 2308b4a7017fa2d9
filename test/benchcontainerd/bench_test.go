package benchcontainerd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/podspec"
)

const (
	// bareLabel marks the bare calls' sandboxes.
	bareLabel = "io.actorlet.bench.bare"
	pods      = 30
	source    = "bench"
	suffix    = "-benchcontainerd"
)

func BenchmarkPodStartup(b *testing.B) {
	endpoint := os.Getenv("ACTORLET_CONTAINERD_ENDPOINT")
	if endpoint == "" {
		b.Skip("no containerd: run `test/e2e/env.sh up` and source its env file (make bench-containerd does both)")
	}
	image := os.Getenv("ACTORLET_E2E_WORKLOAD_IMAGE")
	if image == "" {
		image = "localhost/actorlet/workload:1.0"
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("ACTORLET_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	ctx := context.Background()
	client, err := cri.Dial(ctx, endpoint, "", cri.Options{Timeout: 2 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		removeOurs(b, client)
		removeBare(b, client)
		client.Close()
	})
	version, err := client.Version(ctx)
	if err != nil {
		b.Fatal(err)
	}
	logs := b.TempDir()
	opts := podspec.Options{PodLogsDir: logs}

	type result struct{ bare, actorlet []time.Duration }
	results := map[string]*result{}
	shapes := []string{"burst", "serial"}
	if v := os.Getenv("ACTORLET_BENCH_SHAPES"); v != "" {
		shapes = strings.Split(v, ",")
	}
	for range b.N {
		for round := range rounds {
			for _, shape := range shapes {
				r := results[shape]
				if r == nil {
					r = &result{}
					results[shape] = r
				}
				n := startNode(b, client, version.GetRuntimeName(), logs)
				bare, act := newPods(shape+"-bare", round, image), newPods(shape+"-actorlet", round, image)
				if shape == "burst" {
					// Alternate which goes first, round by round.
					if round%2 == 0 {
						r.bare = append(r.bare, runBare(b, client, bare, opts)...)
						r.actorlet = append(r.actorlet, n.start(b, act)...)
					} else {
						r.actorlet = append(r.actorlet, n.start(b, act)...)
						r.bare = append(r.bare, runBare(b, client, bare, opts)...)
					}
				} else {
					// Pod by pod, alternating which goes first, so both see
					// the same number of running containers.
					for i := range pods {
						if i%2 == 0 {
							r.bare = append(r.bare, runBare(b, client, bare[i:i+1], opts)...)
							r.actorlet = append(r.actorlet, n.start(b, act[i:i+1])...)
						} else {
							r.actorlet = append(r.actorlet, n.start(b, act[i:i+1])...)
							r.bare = append(r.bare, runBare(b, client, bare[i:i+1], opts)...)
						}
					}
				}
				n.stop(b)
				removeBare(b, client)
			}
		}
	}

	fmt.Printf("\npod startup on %s %s, %d pods per shape, %d rounds, %d cores\n\n", version.GetRuntimeName(), version.GetRuntimeVersion(), pods, rounds, runtime.NumCPU())
	fmt.Println("| shape | actorlet p50 / p99 | bare CRI calls p50 / p99 | overhead p50 / p99 | target |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, shape := range shapes {
		r := results[shape]
		a50, a99 := percentile(r.actorlet, 50), percentile(r.actorlet, 99)
		c50, c99 := percentile(r.bare, 50), percentile(r.bare, 99)
		o50, o99 := overhead(a50, c50), overhead(a99, c99)
		verdict := "miss"
		if o50 < 10 && o99 < 10 {
			verdict = "pass"
		}
		fmt.Printf("| %s | %s / %s | %s / %s | %+.1f %% / %+.1f %% | < 10 %%: %s |\n", shape, ms(a50), ms(a99), ms(c50), ms(c99), o50, o99, verdict)
		b.ReportMetric(float64(a50.Microseconds())/1000, shape+"-actorlet-p50-ms")
		b.ReportMetric(float64(a99.Microseconds())/1000, shape+"-actorlet-p99-ms")
		b.ReportMetric(float64(c50.Microseconds())/1000, shape+"-bare-p50-ms")
		b.ReportMetric(float64(c99.Microseconds())/1000, shape+"-bare-p99-ms")
	}
	fmt.Println()
}

// newPods are the pods of one round: one container of the workload image each.
func newPods(tag string, round int, image string) []*corev1.Pod {
	grace := int64(1)
	out := make([]*corev1.Pod, pods)
	for i := range out {
		name := fmt.Sprintf("%s-%d-%02d%s", tag, round, i, suffix)
		out[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: types.UID(fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))},
			Spec: corev1.PodSpec{
				RestartPolicy:                 corev1.RestartPolicyAlways,
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{
					Name: "app", Image: image, Args: []string{"-msg", "bench"}, ImagePullPolicy: corev1.PullNever,
				}},
			},
		}
	}
	return out
}

// runBare starts the pods at once (a goroutine each) with the three CRI
// calls and returns each pod's time from its first call to StartContainer's
// return. Its sandboxes lack actorlet's managed label, so the node running
// beside them leaves them alone.
func runBare(b *testing.B, client *cri.Client, ps []*corev1.Pod, opts podspec.Options) []time.Duration {
	ctx := context.Background()
	lat := make([]time.Duration, len(ps))
	start := func(i int) {
		p := ps[i]
		t0 := time.Now()
		if err := os.MkdirAll(podspec.PodLogDir(opts.PodLogsDir, p)+"/app", 0o755); err != nil {
			b.Error(err)
			return
		}
		sbCfg := podspec.SandboxConfigBestEffort(p, 1, opts)
		sbCfg.Labels[bareLabel] = "true"
		delete(sbCfg.Labels, cri.LabelManaged)
		sb, err := client.RunPodSandbox(ctx, sbCfg, "")
		if err != nil {
			b.Errorf("RunPodSandbox %s: %v", p.Name, err)
			return
		}
		cfg := podspec.LiteralContainerConfig(p, &p.Spec.Containers[0], 1)
		delete(cfg.Labels, cri.LabelManaged)
		id, err := client.CreateContainer(ctx, sb, cfg, sbCfg)
		if err != nil {
			b.Errorf("CreateContainer %s: %v", p.Name, err)
			return
		}
		if err := client.StartContainer(ctx, id); err != nil {
			b.Errorf("StartContainer %s: %v", p.Name, err)
			return
		}
		lat[i] = time.Since(t0)
	}
	var wg sync.WaitGroup
	for i := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); start(i) }()
	}
	wg.Wait()
	return lat
}

// removeBare stops and removes the bare calls' sandboxes.
func removeBare(b *testing.B, client *cri.Client) {
	ctx := context.Background()
	list, err := client.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{bareLabel: "true"}})
	if err != nil {
		b.Error(err)
		return
	}
	for _, sb := range list {
		if err := client.StopPodSandbox(ctx, sb.Id); err != nil {
			b.Error(err)
		}
		if err := client.RemovePodSandbox(ctx, sb.Id); err != nil {
			b.Error(err)
		}
	}
}

// node is an embedded actorlet node with a fresh journal; it keeps the pods
// handed to it so far.
type node struct {
	a      *agent.Agent
	client *cri.Client
	pods   []*corev1.Pod
}

func startNode(b *testing.B, client *cri.Client, runtimeName, logs string) *node {
	a, err := agent.Start(context.Background(), agent.WithNodeName("bench"), agent.WithRootDir(b.TempDir()),
		agent.WithRuntime(client, runtimeName), agent.WithPodConfig(podspec.Options{PodLogsDir: logs}),
		agent.WithLifecycle(lifecycle.DefaultConfig()), agent.WithRelistPeriod(time.Second),
		agent.WithHostIP("127.0.0.1"), agent.WithLogger(zap.NewNop()),
		agent.WithActorOptions(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		})))
	if err != nil {
		b.Fatal(err)
	}
	return &node{a: a, client: client}
}

// start hands the node ps on top of its pods and returns each one's time
// from then to its containers running, as the node's status reports it.
func (n *node) start(b *testing.B, ps []*corev1.Pod) []time.Duration {
	lat := make([]time.Duration, len(ps))
	n.pods = append(n.pods, ps...)
	t0 := time.Now()
	n.a.SetPods(source, slices.Clone(n.pods))
	waitRunning(b, n.a, ps, func(i int, at time.Time) { lat[i] = at.Sub(t0) })
	return lat
}

// stop removes the node's pods, waits until containerd holds none of them
// and stops the node.
func (n *node) stop(b *testing.B) {
	n.a.SetPods(source, nil)
	waitGone(b, n.client)
	if err := n.a.Stop(context.Background()); err != nil {
		b.Error(err)
	}
}

// waitRunning polls the node's status every millisecond until every pod's
// containers run, calling done with each pod's index when it sees it.
func waitRunning(b *testing.B, a *agent.Agent, ps []*corev1.Pod, done func(int, time.Time)) {
	left := map[int]bool{}
	for i := range ps {
		left[i] = true
	}
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(left) > 0 {
		now := time.Now()
		for i := range left {
			if p, ok := a.Statuses().Get(string(ps[i].UID)); ok && allRunning(p) {
				done(i, now)
				delete(left, i)
			}
		}
		if now.After(deadline) {
			b.Fatalf("%d pods not running after 5 minutes", len(left))
		}
		<-tick.C
	}
}

func allRunning(p *corev1.Pod) bool {
	if len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// waitGone waits until containerd holds none of this benchmark's pods.
func waitGone(b *testing.B, client *cri.Client) {
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		views, err := client.ListPods(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, v := range views {
			if strings.HasSuffix(v.Name, suffix) {
				n++
			}
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d benchmark pods still in containerd after 5 minutes", n)
		}
		<-tick.C
	}
}

// removeOurs stops and removes every sandbox of this benchmark's pods.
func removeOurs(b *testing.B, client *cri.Client) {
	ctx := context.Background()
	views, err := client.ListPods(ctx)
	if err != nil {
		b.Error(err)
		return
	}
	for _, v := range views {
		if !strings.HasSuffix(v.Name, suffix) {
			continue
		}
		for _, sb := range v.Sandboxes {
			if err := client.StopPodSandbox(ctx, sb.ID); err != nil {
				b.Error(err)
			}
			if err := client.RemovePodSandbox(ctx, sb.ID); err != nil {
				b.Error(err)
			}
		}
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(i, 0)]
}

func overhead(actorlet, bare time.Duration) float64 {
	if bare == 0 {
		return 0
	}
	return 100 * (float64(actorlet) - float64(bare)) / float64(bare)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
