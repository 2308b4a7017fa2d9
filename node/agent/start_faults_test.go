package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/podspec"
)

func (e *env) startErr() (*agent.Agent, error) {
	return agent.Start(context.Background(), agent.WithNodeName("node-1"), agent.WithRootDir(e.root), agent.WithRuntime(e.client, "actorlet-sim"),
		agent.WithPodConfig(podspec.Options{PodLogsDir: e.logs}), agent.WithLifecycle(lifecycle.DefaultConfig()), agent.WithLogger(zaptest.NewLogger(e.t)))
}

// TestStartRidesOutARuntimeOutage: the start-up listing of a runtime that
// is restarting is tried again until the runtime answers (a single lost
// reply used to stop the node).
func TestStartRidesOutARuntimeOutage(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(2e9, 0))
	e := newEnvWith(t, sim.Options{Clock: clk, Faults: &faults.Plan{}})
	if err := e.rt.Faults().Restart(faults.RestartKeep, time.Hour); err != nil {
		t.Fatal(err)
	}
	type started struct {
		a   *agent.Agent
		err error
	}
	done := make(chan started, 1)
	go func() {
		a, err := e.startErr()
		done <- started{a, err}
	}()
	waitFor(t, "the listing to be refused twice", func() (bool, string) {
		n := e.rt.Faults().Totals()[faults.KindDown]
		return n >= 2, ""
	})
	clk.Step(time.Hour) // the runtime is back
	s := <-done
	if s.err != nil {
		t.Fatalf("Start after an outage: %v", s.err)
	}
	if err := s.a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestStartFailsOnADefinitiveListingError: an error that no retry mends
// (here InvalidArgument) ends Start with the reason.
func TestStartFailsOnADefinitiveListingError(t *testing.T) {
	p, err := faults.Parse([]byte(`rpcs: {ListPodSandbox: {error: 1, codes: [InvalidArgument]}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, sim.Options{Faults: p})
	if _, err := e.startErr(); err == nil || !strings.Contains(err.Error(), "list the runtime's pods") || !strings.Contains(err.Error(), "InvalidArgument") {
		t.Fatalf("Start: %v, want the listing's InvalidArgument", err)
	}
}
