package agent_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/stats"
)

// TestEvictionOnTheSimulatedRuntime: with a memory threshold above what
// this host has free, the node is under memory pressure at once; the pod
// using the most memory above its request (SIM_MEMORY_BYTES) is evicted
// first: Failed, reason Evicted, a DisruptionTarget condition, its
// container stopped; the others run on; MemoryPressure is reported.
func TestEvictionOnTheSimulatedRuntime(t *testing.T) {
	e := newEnv(t)
	cfg, err := eviction.ParseConfig(&kubeletconfigv1beta1.KubeletConfiguration{
		EvictionHard: map[string]string{"memory.available": "1000Ti"}})
	if err != nil {
		t.Fatal(err)
	}
	hog := pod("hog", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_MEMORY_BYTES", Value: fmt.Sprint(512 << 20)})
	modest := pod("modest", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_MEMORY_BYTES", Value: fmt.Sprint(256 << 20)})
	modest.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
	// The pods first run without eviction: a pod without stats yet would be
	// ranked first (as the kubelet ranks it); the node is then restarted
	// with eviction on, and takes the running pods over.
	first := e.start(modest, hog)
	waitFor(t, "both pods Running", func() (bool, string) {
		a, _ := phaseOf(first, "uid-hog")
		b, _ := phaseOf(first, "uid-modest")
		return a == corev1.PodRunning && b == corev1.PodRunning, fmt.Sprint(a, b)
	})
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	lc := lifecycle.DefaultConfig()
	a, err := agent.Start(context.Background(), append(e.options(lc, []*corev1.Pod{modest, hog}),
		agent.WithEviction(cfg, 200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	waitFor(t, "hog evicted", func() (bool, string) {
		ph, p := phaseOf(a, "uid-hog")
		if p == nil {
			return false, "no status"
		}
		disrupted := false
		for _, c := range p.Status.Conditions {
			disrupted = disrupted || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue)
		}
		return ph == corev1.PodFailed && p.Status.Reason == "Evicted" && disrupted && p.Status.ContainerStatuses[0].State.Terminated != nil,
			fmt.Sprintf("%s %s %q", ph, p.Status.Reason, p.Status.Message)
	})
	// The journal says in which order: hog first (over its request), then
	// maybe modest (within its request) on a later pass.
	evictedAt := func(uid string) int64 {
		s, err := a.Journal().Load(context.Background(), uid)
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range s.Events {
			if env.GetEvent().GetPodEvicted() != nil {
				return env.TimeUnixNano
			}
		}
		return 0
	}
	if hogAt, modestAt := evictedAt("uid-hog"), evictedAt("uid-modest"); hogAt == 0 || (modestAt != 0 && modestAt < hogAt) {
		t.Fatalf("evicted hog at %d, modest at %d: want hog first", hogAt, modestAt)
	}
	pressure := false
	for _, c := range a.Eviction().Conditions() {
		pressure = pressure || (c.Type == corev1.NodeMemoryPressure && c.Status == corev1.ConditionTrue)
	}
	if !pressure {
		t.Fatalf("no MemoryPressure: %+v", a.Eviction().Conditions())
	}
	e.checkViolations()
}

// memFS is the host's file system for node stats, but for a /proc/meminfo
// whose free memory the test sets (and no cgroup memory files): the
// node's memory.available is then exactly free.
type memFS struct {
	stats.HostFS
	free atomic.Int64
}

func (m *memFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	switch {
	case name == "/proc/meminfo":
		return fmt.Appendf(nil, "MemTotal: %d kB\nMemFree: %d kB\nInactive(file): 0 kB\n", 64<<20, m.free.Load()>>10), nil
	case strings.HasPrefix(name, "/sys/fs/cgroup"):
		return nil, os.ErrNotExist
	}
	return m.HostFS.ReadFile(ctx, name)
}

// TestEvictionPressureComesAndGoes, on the simulated runtime with an
// injected clock: memory.available crossing the threshold evicts the pod
// over its request, sets MemoryPressure and the memory-pressure taint;
// once memory is back they stay for the transition period (5m) and clear
// after it.
func TestEvictionPressureComesAndGoes(t *testing.T) {
	e := newEnv(t)
	cfg, err := eviction.ParseConfig(&kubeletconfigv1beta1.KubeletConfiguration{
		EvictionHard: map[string]string{"memory.available": "1Gi"}})
	if err != nil {
		t.Fatal(err)
	}
	fs := &memFS{}
	fs.free.Store(8 << 30)
	clk := clocktesting.NewFakeClock(time.Now())
	hog := pod("hog", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_MEMORY_BYTES", Value: fmt.Sprint(512 << 20)})
	modest := pod("modest", corev1.RestartPolicyAlways, corev1.EnvVar{Name: "SIM_MEMORY_BYTES", Value: fmt.Sprint(256 << 20)})
	modest.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}
	a, err := agent.Start(context.Background(), append(e.options(lifecycle.DefaultConfig(), []*corev1.Pod{modest, hog}),
		agent.WithStatsFS(fs), agent.WithEviction(cfg, time.Hour, eviction.WithClock(clk)))...) // passes are the test's
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	waitFor(t, "both pods Running", func() (bool, string) {
		h, _ := phaseOf(a, "uid-hog")
		m, _ := phaseOf(a, "uid-modest")
		return h == corev1.PodRunning && m == corev1.PodRunning, fmt.Sprint(h, m)
	})
	pressure := func() (cond bool, taint bool) {
		for _, c := range a.Eviction().Conditions() {
			cond = cond || (c.Type == corev1.NodeMemoryPressure && c.Status == corev1.ConditionTrue)
		}
		for _, tt := range a.Eviction().Taints() {
			taint = taint || tt.Key == corev1.TaintNodeMemoryPressure
		}
		return cond, taint
	}
	pass := func() eviction.Pass {
		t.Helper()
		clk.Step(10 * time.Second)
		p, err := a.Eviction().Synchronize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := pass(); p.Evicted != nil {
		t.Fatalf("evicted %s with 8Gi free", p.Evicted.Pod.Name)
	}
	fs.free.Store(512 << 20)
	if p := pass(); p.Evicted == nil || p.Evicted.Pod.Name != "hog" {
		t.Fatalf("with 512Mi free evicted %+v, want hog (over its request) before modest", p.Evicted)
	}
	if c, tt := pressure(); !c || !tt {
		t.Fatalf("MemoryPressure %v, taint %v: want both", c, tt)
	}
	waitFor(t, "hog Failed, Evicted", func() (bool, string) {
		ph, p := phaseOf(a, "uid-hog")
		return ph == corev1.PodFailed && p.Status.Reason == "Evicted", string(ph)
	})
	fs.free.Store(8 << 30)
	pass()
	if c, tt := pressure(); !c || !tt {
		t.Fatalf("memory back: MemoryPressure %v, taint %v cleared before the transition period", c, tt)
	}
	clk.Step(5 * time.Minute)
	pass()
	if c, tt := pressure(); c || tt {
		t.Fatalf("after the transition period: MemoryPressure %v, taint %v: want both cleared", c, tt)
	}
	if ph, _ := phaseOf(a, "uid-modest"); ph != corev1.PodRunning {
		t.Fatalf("modest is %s, want Running", ph)
	}
}
