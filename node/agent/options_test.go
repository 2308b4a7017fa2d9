package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
