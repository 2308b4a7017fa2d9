package app

import (
	"context"
	"errors"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/node/kubeletconfig"
	"github.com/actorlet/actorlet/node/server"
)

// localServers are the node's plain-HTTP servers (package server): the
// health port, /healthz only, and the read-only port, /healthz, /pods,
// /metrics and /stats/summary unauthenticated. Either may be nil (off).
type localServers struct {
	health, readOnly *server.Server
}

// localProviders answer the read-only port.
type localProviders struct {
	Pods     server.PodLister
	Gatherer prometheus.Gatherer
	Summary  server.SummaryProvider
	Healthz  func(ctx context.Context) error
}

// newLocalServers builds the servers nc asks for, not listening yet:
//   - the health port on healthzBindAddress:healthzPort; port 0 is off, as
//     in the kubelet, and under actorlet run any free port;
//   - the read-only port on readOnlyAddress(nc):readOnlyPort; 0 (the
//     default) is off in both profiles.
func newLocalServers(nc *nodeConfig, p localProviders, log *zap.Logger) (*localServers, error) {
	kc := nc.kc
	var ls localServers
	if nc.profile == kubeletconfig.RunProfile || *kc.HealthzPort != 0 {
		s, err := server.New(server.Options{Address: kc.HealthzBindAddress, Port: int(*kc.HealthzPort),
			Healthz: p.Healthz, Logger: log.Named("healthz")})
		if err != nil {
			return nil, err
		}
		ls.health = s
	}
	if kc.ReadOnlyPort != 0 {
		s, err := server.New(server.Options{Address: nc.readOnlyAddress, Port: int(kc.ReadOnlyPort),
			Pods: p.Pods, Gatherer: p.Gatherer, Summary: p.Summary, Healthz: p.Healthz, Logger: log.Named("read-only")})
		if err != nil {
			return nil, err
		}
		ls.readOnly = s
	}
	return &ls, nil
}

// start binds both; if the second fails, the first is shut down.
func (ls *localServers) start(ctx context.Context) error {
	for _, s := range ls.servers() {
		if err := s.Start(ctx); err != nil {
			_ = ls.shutdown(context.WithoutCancel(ctx))
			return err
		}
	}
	return nil
}

// shutdown stops both (see server.Shutdown).
func (ls *localServers) shutdown(ctx context.Context) error {
	var errs []error
	for _, s := range ls.servers() {
		errs = append(errs, s.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func (ls *localServers) servers() []*server.Server {
	var out []*server.Server
	for _, s := range []*server.Server{ls.health, ls.readOnly} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// addrs are the bound addresses for the log line, "off" for a server that
// is off.
func (ls *localServers) addrs() (health, readOnly string) {
	health, readOnly = "off", "off"
	if ls.health != nil {
		health = ls.health.Addr()
	}
	if ls.readOnly != nil {
		readOnly = ls.readOnly.Addr()
	}
	return health, readOnly
}

// readOnlyAddress is where the read-only port listens. The kubelet binds
// it to --address (0.0.0.0 by default), which would serve every pod's spec
// to the network without authentication. actorlet uses --address too, with
// one exception: an unspecified address (0.0.0.0, ::) that was not given
// on the command line (the default, or a config file's) becomes
// 127.0.0.1. So the read-only port is on loopback unless the operator asks
// otherwise: --address 0.0.0.0 on the command line, or a specific IP from
// either. Under actorlet run, --address is 127.0.0.1 by default already.
func readOnlyAddress(address string, onCommandLine bool) string {
	if onCommandLine {
		return address
	}
	if ip := net.ParseIP(address); address == "" || ip != nil && ip.IsUnspecified() {
		return server.DefaultAddress
	}
	return address
}
