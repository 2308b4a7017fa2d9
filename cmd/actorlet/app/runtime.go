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
// nil) is told of every call; tp (may be nil) traces every call.
func connectRuntime(ctx context.Context, endpoint, imageEndpoint string, timeout time.Duration, simOpts sim.Options, obs cri.Observer, tp trace.TracerProvider, log *zap.Logger) (client *cri.Client, close func(), err error) {
	if strings.HasPrefix(endpoint, "sim:") {
		if endpoint != SimEndpoint {
			return nil, nil, fmt.Errorf("--container-runtime-endpoint %q: the simulated runtime is %q", endpoint, SimEndpoint)
		}
		simOpts.Logger = log.Named("sim")
		rt, err := sim.New(simOpts)
		if err != nil {
			return nil, nil, err
		}
		conn, stop := sim.Direct(rt, cri.TracingStatsHandler(tp))
		client = cri.NewFromConn(conn, conn, cri.Options{Timeout: timeout, Logger: log, Observer: obs})
		return client, func() { client.Close(); stop(); rt.Close() }, nil
	}
	client, err = cri.Dial(ctx, endpoint, imageEndpoint, cri.Options{Timeout: timeout, Logger: log, Observer: obs, TracerProvider: tp})
	if err != nil {
		return nil, nil, err
	}
	return client, func() { client.Close() }, nil
}
