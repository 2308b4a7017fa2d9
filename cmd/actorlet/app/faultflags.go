package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/cri/faults"
)

// faultOptions are the flags of the commands that inject CRI faults
// (sim-runtime, cri-proxy).
type faultOptions struct {
	plan        string
	seed        uint64
	flags       *pflag.FlagSet
	metricsAddr string
}

func (o *faultOptions) addFlags(fs *pflag.FlagSet, defaultPlan string) {
	o.flags = fs
	fs.StringVar(&o.plan, "faults", defaultPlan, "the fault plan: default, none, or a YAML/JSON plan file (see README, \"Faults\")")
	fs.Uint64Var(&o.seed, "seed", 0, "the seed the faults are decided from (default: a random one, logged)")
	fs.StringVar(&o.metricsAddr, "metrics-address", "", "serve Prometheus metrics (injected faults) on this loopback host:port at /metrics")
}

// load reads the plan and picks the seed; both are logged, so that a run
// can be repeated.
func (o *faultOptions) load(log *zap.Logger) (*faults.Plan, uint64, error) {
	p, err := faults.Load(o.plan)
	if err != nil {
		return nil, 0, fmt.Errorf("--faults: %w", err)
	}
	seed := o.seed
	if !o.flags.Changed("seed") {
		seed = rand.Uint64()
	}
	log.Info("fault plan", zap.String("faults", o.plan), zap.Uint64("seed", seed), zap.Bool("empty", p.Empty()))
	return p, seed, nil
}

// serveMetrics serves the injector's counts (and Go and process metrics)
// on --metrics-address until ctx ends; nothing without the flag. The
// address must be loopback: fault counts are nobody else's business.
func (o *faultOptions) serveMetrics(ctx context.Context, inj *faults.Injector, log *zap.Logger) (stop func(), err error) {
	if o.metricsAddr == "" {
		return func() {}, nil
	}
	host, _, err := net.SplitHostPort(o.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address %q: %w", o.metricsAddr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--metrics-address %q: want a loopback address such as 127.0.0.1:9091", o.metricsAddr)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(inj.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	lis, err := net.Listen("tcp", o.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-address: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", zap.Error(err))
		}
	}()
	log.Info("serving metrics", zap.String("address", lis.Addr().String()))
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}
	return stop, nil
}

// faultTotals is the final report's field: faults injected by kind.
func faultTotals(inj *faults.Injector) zap.Field {
	if inj == nil {
		return zap.Skip()
	}
	return zap.Any("faults", inj.Totals())
}
