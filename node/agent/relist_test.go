package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/kubeletmetrics"
)

// TestEventedRelistPeriod checks that a runtime serving container events
// (the simulated one) is still listed in full, at the period given: with
// the default (30s) no listing would come before the deadline.
func TestEventedRelistPeriod(t *testing.T) {
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	km, err := kubeletmetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(e.options(lifecycle.DefaultConfig(), nil), agent.WithMetrics(reg, km),
		agent.WithEventedRelistPeriod(100*time.Millisecond))
	a, err := agent.Start(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	waitFor(t, "three full listings", func() (bool, string) {
		n := relists(t, reg)
		return n >= 3, fmt.Sprintf("%d listings", n)
	})
}

// relists is how many full listings the node's metrics counted.
func relists(t *testing.T, g prometheus.Gatherer) uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "kubelet_pleg_relist_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}
