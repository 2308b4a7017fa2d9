package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// fleetStatus serves a fleet's --status-address: /healthz (every node
// runs and its journal takes appends), /nodes (per node: the pods the API
// server binds to it, the pods it runs actors for, its runtime's sandboxes
// and containers), /metrics (the process's, the kubelet families of all
// the nodes, and the runtimes' counts) and
// /debug/pprof/ (the process's profiles).
// Read only; it changes nothing.
type fleetStatus struct {
	addr string
	srv  *http.Server
	done chan struct{}
}

// fleetNodeStatus is one node's line of /nodes.
type fleetNodeStatus struct {
	Name string `json:"name"`
	// Bound is the pods the API server binds to the node (the shared
	// informer's view); Active the pods the node runs actors for.
	Bound  int `json:"bound"`
	Active int `json:"active"`
	// Sandboxes and Containers are what the node's runtime holds.
	Sandboxes  int    `json:"sandboxes"`
	Containers int    `json:"containers"`
	Err        string `json:"error,omitempty"`
}

// fleetReport is /nodes.
type fleetReport struct {
	Nodes      []fleetNodeStatus `json:"nodes"`
	Sandboxes  int               `json:"sandboxes"`
	Containers int               `json:"containers"`
	Active     int               `json:"active"`
}

func report(ctx context.Context, nodes []*fleetNode, shared *sharedInformers) fleetReport {
	var r fleetReport
	for _, n := range nodes {
		st := fleetNodeStatus{Name: n.name, Bound: shared.pods.Count(n.name)}
		var errs []error
		if active, err := n.built.agent.ActivePods(ctx); err == nil {
			st.Active = len(active)
		} else {
			errs = append(errs, err)
		}
		if sbs, cs, err := n.built.counts(ctx); err == nil {
			st.Sandboxes, st.Containers = sbs, cs
		} else {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			st.Err = err.Error()
		}
		r.Nodes = append(r.Nodes, st)
		r.Sandboxes += st.Sandboxes
		r.Containers += st.Containers
		r.Active += st.Active
	}
	return r
}

// runtimeCollector exports the runtimes' sandboxes and containers, as the
// runtimes count them (a simulated runtime without listing them: a listing
// of every container of a large fleet is tens of MB in flight per scrape).
type runtimeCollector struct {
	nodes                 []*fleetNode
	sandboxes, containers *prometheus.Desc
}

func (c *runtimeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.sandboxes
	ch <- c.containers
}

func (c *runtimeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.nodes {
		if sbs, cs, err := n.built.counts(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(c.sandboxes, prometheus.GaugeValue, float64(sbs), n.name)
			ch <- prometheus.MustNewConstMetric(c.containers, prometheus.GaugeValue, float64(cs), n.name)
		}
	}
}

// serveFleetStatus serves the fleet's status; reg holds the kubelet
// families of the nodes.
func serveFleetStatus(addr string, nodes []*fleetNode, shared *sharedInformers, reg *prometheus.Registry, log *zap.Logger) (*fleetStatus, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--status-address: %w", err)
	}
	s := &fleetStatus{addr: ln.Addr().String(), srv: &http.Server{Handler: fleetStatusHandler(nodes, shared, reg), ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the status server stopped", zap.Error(err))
		}
	}()
	return s, nil
}

// fleetStatusHandler answers the fleet's status requests.
func fleetStatusHandler(nodes []*fleetNode, shared *sharedInformers, reg *prometheus.Registry) http.Handler {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&runtimeCollector{nodes: nodes,
			sandboxes:  prometheus.NewDesc("actorlet_fleet_runtime_pod_sandboxes", "Pod sandboxes in the node's simulated runtime.", []string{"node"}, nil),
			containers: prometheus.NewDesc("actorlet_fleet_runtime_containers", "Containers in the node's simulated runtime.", []string{"node"}, nil)})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(report(r.Context(), nodes, shared))
	})
	// Profiles of the process, for measuring a fleet (opt-in, as the
	// whole endpoint).
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		var errs []error
		for _, n := range nodes {
			select {
			case <-n.built.agent.Done():
				errs = append(errs, fmt.Errorf("node %s stopped", n.name))
			default:
				if err := n.built.agent.JournalHealth(); err != nil {
					errs = append(errs, fmt.Errorf("node %s: %w", n.name, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

func (s *fleetStatus) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}
