package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/sim"
)

// SimEndpoint selects the in-process simulated runtime.
const SimEndpoint = "sim://"

// connectRuntime connects to the CRI runtime at endpoint, or starts the
// in-process simulated runtime for sim://. close releases it. obs (may be
// nil) is told of every call; tp (may be nil) traces every call. counts
// tells how many sandboxes and containers the runtime holds: the simulated
// runtime counts its own, without building a listing; another runtime is
// listed.
func connectRuntime(ctx context.Context, endpoint, imageEndpoint string, timeout time.Duration, simOpts sim.Options, obs cri.Observer, tp trace.TracerProvider, log *zap.Logger) (client *cri.Client, counts runtimeCounts, close func(), err error) {
	if strings.HasPrefix(endpoint, "sim:") {
		if endpoint != SimEndpoint {
			return nil, nil, nil, fmt.Errorf("--container-runtime-endpoint %q: the simulated runtime is %q", endpoint, SimEndpoint)
		}
		simOpts.Logger = log.Named("sim")
		rt, err := sim.New(simOpts)
		if err != nil {
			return nil, nil, nil, err
		}
		conn, stop := sim.Direct(rt, cri.TracingStatsHandler(tp))
		client = cri.NewFromConn(conn, conn, cri.Options{Timeout: timeout, Logger: log, Observer: obs})
		counts = func(context.Context) (int, int, error) {
			sbs, cs := rt.Counts()
			return sbs, cs, nil
		}
		return client, counts, func() { client.Close(); stop(); rt.Close() }, nil
	}
	client, err = cri.Dial(ctx, endpoint, imageEndpoint, cri.Options{Timeout: timeout, Logger: log, Observer: obs, TracerProvider: tp})
	if err != nil {
		return nil, nil, nil, err
	}
	return client, listedCounts(client), func() { client.Close() }, nil
}

// runtimeCounts tells how many sandboxes and containers a runtime holds.
type runtimeCounts func(ctx context.Context) (sandboxes, containers int, err error)

// listedCounts counts a runtime's sandboxes and containers by listing them.
func listedCounts(client *cri.Client) runtimeCounts {
	return func(ctx context.Context) (int, int, error) {
		sbs, err := client.ListPodSandbox(ctx, nil)
		if err != nil {
			return 0, 0, err
		}
		cs, err := client.ListContainers(ctx, nil)
		if err != nil {
			return len(sbs), 0, err
		}
		return len(sbs), len(cs), nil
	}
}
