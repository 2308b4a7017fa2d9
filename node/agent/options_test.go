package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/agent"
)

// TestNewNamesWhatIsMissing: a node without its required parts is refused
// with every missing option named, and nothing is started.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := agent.New(agent.WithLogger(nil))
	if err == nil {
		t.Fatal("New without a name, root dir or runtime succeeded")
	}
	for _, want := range []string{"WithNodeName", "WithRootDir", "WithRuntime"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestRunReadyDone: Run closes Ready once the recovered pods have their
// actors and the node runs; ending its context stops the node, closes Done
// and Run returns nil. The pods keep running in the runtime, and a node on
// the same root dir takes them over without restarting them.
func TestRunReadyDone(t *testing.T) {
	e := newEnv(t)
	p := pod("web", corev1.RestartPolicyAlways)
	a, err := agent.New(e.options(lifecycle.DefaultConfig(), []*corev1.Pod{p})...)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Ready():
		t.Fatal("Ready before Run")
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	<-a.Ready()
	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, fmt.Sprint(ph)
	})
	_, st := phaseOf(a, "uid-web")
	id := st.Status.ContainerStatuses[0].ContainerID
	cancel()
	<-a.Done()
	if err := <-ran; err != nil || a.Err() != nil {
		t.Fatalf("Run = %v, Err = %v; want nil after its context ended", err, a.Err())
	}

	b, err := agent.Start(context.Background(), e.options(lifecycle.DefaultConfig(), []*corev1.Pod{p})...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	waitFor(t, "web Running again", func() (bool, string) {
		ph, _ := phaseOf(b, "uid-web")
		return ph == corev1.PodRunning, fmt.Sprint(ph)
	})
	if _, st := phaseOf(b, "uid-web"); st.Status.ContainerStatuses[0].ContainerID != id {
		t.Fatalf("container %s after the restart, want %s (adopted)", st.Status.ContainerStatuses[0].ContainerID, id)
	}
}

// TestNodesShareAnActorSystem: two nodes run in one actor system the caller
// owns, each with its actors under its own name; stopping one stops its
// actors only: the other's pod runs on and a pod handed to it later starts,
// and the system is not shut down.
func TestNodesShareAnActorSystem(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	start := func(name string, pods ...*corev1.Pod) (*env, *agent.Agent) {
		e := newEnv(t)
		a, err := agent.Start(context.Background(), append(e.options(lifecycle.DefaultConfig(), pods),
			agent.WithNodeName(name), agent.WithActorSystem(system))...)
		if err != nil {
			t.Fatal(err)
		}
		return e, a
	}
	_, one := start("one", pod("web", corev1.RestartPolicyAlways))
	_, two := start("two", pod("db", corev1.RestartPolicyAlways))
	defer two.Stop(context.Background())
	for _, c := range []struct {
		a   *agent.Agent
		uid string
	}{{one, "uid-web"}, {two, "uid-db"}} {
		waitFor(t, c.uid+" Running", func() (bool, string) {
			ph, _ := phaseOf(c.a, c.uid)
			return ph == corev1.PodRunning, fmt.Sprint(ph)
		})
	}
	for _, name := range []string{"one/supervisor", "two/supervisor"} {
		if _, ok := system.ProcessRegistry.GetLocal(name); !ok {
			t.Errorf("no actor %q in the shared system", name)
		}
	}

	if err := one.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := system.ProcessRegistry.GetLocal("one/supervisor"); ok {
		t.Error("node one's Supervisor is still registered after its node stopped")
	}
	two.SetPods("test", []*corev1.Pod{pod("db", corev1.RestartPolicyAlways), pod("cache", corev1.RestartPolicyAlways)})
	waitFor(t, "cache Running on node two after node one stopped", func() (bool, string) {
		ph, _ := phaseOf(two, "uid-cache")
		return ph == corev1.PodRunning, fmt.Sprint(ph)
	})
}

// TestSharedActorSystemRefusesANameTwice: a second node of the same name in
// a shared actor system does not start, and stops nothing of the first.
func TestSharedActorSystemRefusesANameTwice(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	e := newEnv(t)
	first, err := agent.Start(context.Background(), append(e.options(lifecycle.DefaultConfig(), nil),
		agent.WithNodeName("same"), agent.WithActorSystem(system))...)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(context.Background())
	e2 := newEnv(t)
	if second, err := agent.Start(context.Background(), append(e2.options(lifecycle.DefaultConfig(), nil),
		agent.WithNodeName("same"), agent.WithActorSystem(system))...); err == nil {
		second.Stop(context.Background())
		t.Fatal("a second node named \"same\" started in the shared system")
	}
	if _, ok := system.ProcessRegistry.GetLocal("same/supervisor"); !ok {
		t.Fatal("the first node's Supervisor was stopped by the second's failed start")
	}
	first.SetPods("test", []*corev1.Pod{pod("web", corev1.RestartPolicyAlways)})
	waitFor(t, "web Running on the first node", func() (bool, string) {
		ph, _ := phaseOf(first, "uid-web")
		return ph == corev1.PodRunning, fmt.Sprint(ph)
	})
}
