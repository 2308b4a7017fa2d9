package benchcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/actorlet/actorlet/test/internal/upstream"
)

// creators is how many clients create (and delete) the pods at once.
const creators = 20

// member is one node agent under test.
type member struct {
	label, node, namespace string
}

// result holds one member's measurements over all rounds.
type result struct {
	running, deleted, perPod []time.Duration
}

func BenchmarkClusterPods(b *testing.B) {
	admin := os.Getenv("ACTORLET_ADMIN_KUBECONFIG")
	if admin == "" {
		b.Skip("no cluster: run `make bench-cluster` (or test/e2e/cluster.sh up and source its env file)")
	}
	kubelet, err := upstream.KubeletBinary()
	if err != nil {
		b.Skip(err)
	}
	if os.Geteuid() != 0 {
		b.Skip("needs root: the kubelet is started as nobody in its own user and mount namespaces")
	}
	pods := envInt("ACTORLET_BENCH_PODS", 100)
	rounds := envInt("ACTORLET_BENCH_ROUNDS", 1)
	latency := os.Getenv("ACTORLET_BENCH_SIM_LATENCY")
	var simArgs []string
	if latency != "" {
		simArgs = []string{"--latency", latency}
	}

	dir, err := os.MkdirTemp("", "actorlet-benchcluster-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if os.Getenv("ACTORLET_BENCH_KEEP") != "" {
			b.Logf("kept %s (logs of both nodes and their runtimes)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	// The kubelet (nobody) reaches its files below it.
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	actorlet := upstream.BuildActorlet(b, dir)

	cfg, err := clientcmd.BuildConfigFromFlags("", admin)
	if err != nil {
		b.Fatal(err)
	}
	// The admin client is not what is measured: no client-side limit.
	cfg.QPS, cfg.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	nodeKubeconfig := func(node string) string {
		return filepath.Join(os.Getenv("ACTORLET_NODE_KUBECONFIGS"), node+".kubeconfig")
	}
	members := []member{
		{label: "actorlet", node: "node-1", namespace: "bench-actorlet"},
		{label: "kubelet v1.37.2", node: "node-2", namespace: "bench-kubelet"},
	}
	ctx := context.Background()
	b.Cleanup(func() {
		for _, m := range members {
			forceDeletePods(ctx, cs, m.namespace)
			_ = cs.CoreV1().Nodes().Delete(ctx, m.node, metav1.DeleteOptions{})
			_ = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, m.node, metav1.DeleteOptions{})
		}
	})
	for _, m := range members {
		ensureNamespace(b, cs, m.namespace)
		forceDeletePods(ctx, cs, m.namespace)
	}

	simA := upstream.StartSim(b, actorlet, filepath.Join(dir, "actorlet-sim"), simArgs...)
	upstream.StartActorletNode(b, actorlet, filepath.Join(dir, "actorlet"), simA, members[0].node, nodeKubeconfig(members[0].node))
	simK := upstream.StartSim(b, actorlet, filepath.Join(dir, "kubelet-sim"), simArgs...)
	upstream.StartKubelet(b, kubelet, filepath.Join(dir, "kubelet"), simK, members[1].node, nodeKubeconfig(members[1].node))
	for _, m := range members {
		upstream.WaitNodeReady(b, cs, m.node, 2*time.Minute)
	}

	results := map[string]*result{}
	for range b.N {
		for round := range rounds {
			order := slices.Clone(members)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, m := range order {
				r := results[m.label]
				if r == nil {
					r = &result{}
					results[m.label] = r
				}
				running, deleted, perPod := measure(b, cs, m, pods, round)
				r.running = append(r.running, running)
				r.deleted = append(r.deleted, deleted)
				r.perPod = append(r.perPod, perPod...)
			}
		}
	}

	a, k := results[members[0].label], results[members[1].label]
	fmt.Printf("\n%d pods per node, %d rounds (medians), simulated CRI runtime over a socket (latency %q), %d cores\n\n",
		pods, rounds, latency, runtime.NumCPU())
	fmt.Println("| node agent | all Running | per pod p50 / p99 | all deleted |")
	fmt.Println("| --- | --- | --- | --- |")
	for _, m := range members {
		r := results[m.label]
		fmt.Printf("| %s | %s | %s / %s | %s |\n", m.label, ms(median(r.running)), ms(percentile(r.perPod, 50)),
			ms(percentile(r.perPod, 99)), ms(median(r.deleted)))
	}
	runRatio := ratio(median(k.running), median(a.running))
	delRatio := ratio(median(k.deleted), median(a.deleted))
	fmt.Printf("| kubelet / actorlet | %.2fx (target >= 2x: %s) | %.2fx | %.2fx (target >= 2x: %s) |\n\n",
		runRatio, verdict(runRatio), ratio(percentile(k.perPod, 50), percentile(a.perPod, 50)), delRatio, verdict(delRatio))
	b.ReportMetric(float64(median(a.running).Milliseconds()), "actorlet-running-ms")
	b.ReportMetric(float64(median(k.running).Milliseconds()), "kubelet-running-ms")
	b.ReportMetric(float64(median(a.deleted).Milliseconds()), "actorlet-deleted-ms")
	b.ReportMetric(float64(median(k.deleted).Milliseconds()), "kubelet-deleted-ms")
}

// measure creates n pods bound to m's node, waits until the API server
// reports all of them Running, deletes them gracefully and waits until all
// are gone. It returns both spans and each pod's create-to-Running time.
func measure(b *testing.B, cs kubernetes.Interface, m member, n, round int) (running, deleted time.Duration, perPod []time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	runningAt := map[string]time.Time{}
	deletedAt := map[string]time.Time{}
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Status.Phase != corev1.PodRunning {
			return
		}
		mu.Lock()
		if _, done := runningAt[p.Name]; !done {
			runningAt[p.Name] = time.Now()
		}
		mu.Unlock()
		notify()
	}
	gone := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		mu.Lock()
		deletedAt[p.Name] = time.Now()
		mu.Unlock()
		notify()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(m.namespace))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: gone,
	}); err != nil {
		b.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("pod informer did not sync")
	}

	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p-%d-%03d", round, i)
	}
	createdAt := make([]time.Time, n)
	start := time.Now()
	parallel(b, n, func(i int) error {
		createdAt[i] = time.Now()
		_, err := cs.CoreV1().Pods(m.namespace).Create(ctx, newPod(names[i], m), metav1.CreateOptions{})
		return err
	})
	waitCount(b, m.label+" pods Running", changed, 10*time.Minute, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(runningAt)
	}, n)
	mu.Lock()
	last := start
	for i, name := range names {
		t := runningAt[name]
		last = maxTime(last, t)
		perPod = append(perPod, t.Sub(createdAt[i]))
	}
	mu.Unlock()
	running = last.Sub(start)

	start = time.Now()
	parallel(b, n, func(i int) error {
		return cs.CoreV1().Pods(m.namespace).Delete(ctx, names[i], metav1.DeleteOptions{})
	})
	waitCount(b, m.label+" pods deleted", changed, 10*time.Minute, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(deletedAt)
	}, n)
	mu.Lock()
	last = start
	for _, t := range deletedAt {
		last = maxTime(last, t)
	}
	mu.Unlock()
	return running, last.Sub(start), perPod
}

// newPod is one pod of a round: one container, bound to m's node, default
// grace period (the simulated containers exit at once on StopContainer).
func newPod(name string, m member) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.namespace, Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{
			NodeName: m.node,
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example/bench/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
			}},
		},
	}
}

// parallel runs f for 0..n-1 on creators goroutines.
func parallel(b *testing.B, n int, f func(i int) error) {
	b.Helper()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range creators {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// waitCount waits until count() reaches want, woken by changed, failing
// after timeout.
func waitCount(b *testing.B, what string, changed <-chan struct{}, timeout time.Duration, count func() int, want int) {
	b.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for count() < want {
		select {
		case <-changed:
		case <-deadline.C:
			b.Fatalf("%s: %d of %d after %v", what, count(), want, timeout)
		}
	}
}

func ensureNamespace(b *testing.B, cs kubernetes.Interface, name string) {
	b.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
}

// forceDeletePods removes what an earlier, interrupted run left behind.
func forceDeletePods(ctx context.Context, cs kubernetes.Interface, ns string) {
	zero := int64(0)
	_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func ratio(slow, fast time.Duration) float64 {
	if fast <= 0 {
		return 0
	}
	return float64(slow) / float64(fast)
}

func verdict(r float64) string {
	if r >= 2 {
		return "pass"
	}
	return "miss"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
