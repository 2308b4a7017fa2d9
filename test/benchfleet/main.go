package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every node's capacity, on both sides.
const (
	nodeCPU    = "32"
	nodeMemory = "256Gi"
	maxPods    = 110
)

// config is the command line.
type config struct {
	nodes, pods, faultyPods int
	steady, faultySteady    time.Duration
	timeout, deleteFallback time.Duration
	sides                   []string
	clusterScript, prefix   string
	actorlet, kwok          string
	out                     string
	qps, inflight           int
	fleetAddress, kwokAddr  string
	fleetArgs               string
	fleetMemLimit           string
	placement               string
	// directRate bounds the pod creations and deletions per second of
	// -placement direct (0: only createWorkers bounds them); deleteRate,
	// when 0 or more, bounds the deletions instead (0: unbounded; below
	// 0: as directRate).
	directRate, deleteRate float64
}

func parseFlags() *config {
	c := &config{}
	tools := os.Getenv("ACTORLET_TOOLS")
	if tools == "" {
		tools = "/var/cache/actorlet-tools"
	}
	var sides string
	flag.IntVar(&c.nodes, "nodes", 1000, "nodes of each side")
	flag.IntVar(&c.pods, "pods", 10000, "pods of the Deployment")
	flag.DurationVar(&c.steady, "steady", 5*time.Minute, "how long the steady state is held")
	flag.IntVar(&c.faultyPods, "faulty-pods", 1000, "actorlet only: pods of the faulty phase, a third crash-looping and a third failing their readiness probe (0: no faulty phase)")
	flag.DurationVar(&c.faultySteady, "faulty-steady", 2*time.Minute, "how long the faulty pods are held")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "the longest any phase may take")
	flag.DurationVar(&c.deleteFallback, "delete-fallback", 3*time.Minute, "when pods not being deleted remain this long after the scale to 0, delete them one by one")
	flag.StringVar(&sides, "sides", "kwok,actorlet", "the sides to run, in order")
	flag.StringVar(&c.clusterScript, "cluster-sh", "test/e2e/cluster.sh", "the control plane's script")
	flag.StringVar(&c.prefix, "cluster-prefix", os.Getenv("ACTORLET_CLUSTER_PREFIX"), "the control plane's directory (default $ACTORLET_CLUSTER_PREFIX)")
	flag.StringVar(&c.actorlet, "actorlet", "bin/actorlet", "the actorlet binary")
	flag.StringVar(&c.kwok, "kwok", filepath.Join(tools, "kwok-v0.8.0", "kwok"), "the kwok binary (stages.yaml next to it)")
	flag.StringVar(&c.out, "out", "_out/benchfleet", "logs and the table")
	flag.IntVar(&c.qps, "control-plane-qps", 500, "scheduler's and controller-manager's --kube-api-qps (burst twice that)")
	flag.IntVar(&c.inflight, "apiserver-inflight", 1600, "apiserver's --max-requests-inflight (mutating: half)")
	flag.StringVar(&c.fleetAddress, "fleet-status-address", "127.0.0.1:31000", "actorlet fleet's --status-address")
	flag.StringVar(&c.kwokAddr, "kwok-server-address", "127.0.0.1:31001", "kwok's --server-address")
	flag.StringVar(&c.fleetArgs, "fleet-args", "", "more flags of actorlet fleet, space-separated")
	flag.StringVar(&c.placement, "placement", placementScheduler, "how pods reach the nodes: scheduler (Deployments, kube-scheduler binds them) or direct (the bench creates them bound to the nodes round-robin and deletes them one by one)")
	flag.Float64Var(&c.directRate, "direct-rate", 0, "with -placement direct: pod creations and deletions per second at most (0: as fast as the bench's workers and the API server go)")
	flag.Float64Var(&c.deleteRate, "delete-rate", -1, "with -placement direct: pod deletions per second at most (0: as fast as the bench's workers and the API server go; default: as -direct-rate)")
	flag.StringVar(&c.fleetMemLimit, "fleet-gomemlimit", "", "the fleet process's GOMEMLIMIT (e.g. 1800MiB; default none)")
	flag.Parse()
	c.sides = strings.Split(sides, ",")
	if c.placement != placementScheduler && c.placement != placementDirect {
		log.Fatalf("-placement %q: want %s or %s", c.placement, placementScheduler, placementDirect)
	}
	return c
}

func main() {
	log.SetFlags(log.Ltime)
	c := parseFlags()
	if c.prefix == "" {
		log.Fatal("no control plane prefix: set ACTORLET_CLUSTER_PREFIX or -cluster-prefix")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	started := time.Now().UTC()
	results := map[string]map[string]*measure{}
	var order []string
	var failures []error
	var notes []string
	for _, name := range c.sides {
		s, err := runSide(ctx, c, name)
		if s != nil {
			results[name] = s.results
			notes = append(notes, s.notes...)
			for _, p := range s.order {
				if !slices.Contains(order, p) {
					order = append(order, p)
				}
			}
		}
		if err != nil {
			log.Printf("%s: %v", name, err)
			failures = append(failures, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	var rows []row
	for _, p := range order {
		r := row{Phase: p, By: map[string]*measure{}}
		for _, sd := range c.sides {
			if m := results[sd][p]; m != nil {
				r.By[sd] = m
			}
		}
		rows = append(rows, r)
	}
	text := fmt.Sprintf("benchfleet %s, commit %s: %d nodes, %d pods, steady %s, faulty %d pods held %s; pods placed by %s; control plane QPS %d, apiserver inflight %d\n\n%s",
		started.Format("2006-01-02 15:04 UTC"), commit(), c.nodes, c.pods, c.steady, c.faultyPods, c.faultySteady, c.placement, c.qps, c.inflight, markdownTable(rows))
	text += c.directPace()
	if c.fleetMemLimit != "" {
		text += "\nactorlet fleet ran with GOMEMLIMIT=" + c.fleetMemLimit + "\n"
	}
	for _, n := range notes {
		text += "\n" + n + "\n"
	}
	fmt.Print(text)
	if err := os.WriteFile(filepath.Join(c.out, "table.md"), []byte(text), 0o644); err != nil {
		log.Print(err)
	}
	if len(failures) > 0 {
		log.Fatal(errors.Join(failures...))
	}
}

// runSide brings a control plane up, runs the phases of side name on it and
// takes it down, as well as the node process.
func runSide(ctx context.Context, c *config, name string) (s *side, err error) {
	cp := controlPlane{script: c.clusterScript, prefix: c.prefix, qps: c.qps, inflight: c.inflight}
	if err := cp.run(ctx, "up"); err != nil {
		return nil, err
	}
	defer func() {
		if derr := cp.run(context.Background(), "down"); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	restCfg, cs, err := cp.adminClient()
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	prefix := name + "-"
	if name == "actorlet" {
		prefix = "fleet-"
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := startWatch(wctx, cs, namespace, prefix)
	if err != nil {
		return nil, err
	}
	s = &side{name: name, cfg: c, cs: cs, rest: restCfg, w: w, results: map[string]*measure{}}
	defer func() {
		if s.proc != nil {
			if serr := s.proc.stop(30 * time.Second); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}()

	// 1. nodes to Ready: from the process's start (and, for KWOK, the
	// harness's creation of the Nodes) until all are Ready.
	err = s.phase(ctx, fmt.Sprintf("%s nodes Ready", thousands(int64(c.nodes))), func(ctx context.Context) error {
		if err := s.startNodes(ctx, cp, prefix); err != nil {
			return err
		}
		return s.nodesReady(ctx, c.nodes)
	})
	if err != nil {
		return s, err
	}
	// 2. pods to Running.
	err = s.phase(ctx, fmt.Sprintf("%s pods Running", thousands(int64(c.pods))), func(ctx context.Context) error {
		return s.podsUp(ctx, int32Deployment{"bench-steady", roleSteady, int32(c.pods)})
	})
	if err != nil {
		return s, err
	}
	// 3. steady state.
	err = s.phase(ctx, fmt.Sprintf("steady state, %s", c.steady), func(ctx context.Context) error { return s.hold(ctx, c.steady) })
	if err != nil {
		return s, err
	}
	// 4. deletion.
	err = s.phase(ctx, fmt.Sprintf("%s pods deleted", thousands(int64(c.pods))), s.podsGone)
	if err != nil {
		return s, err
	}
	// 5. actorlet only: crash-looping and probe-failing pods.
	if name != "actorlet" || c.faultyPods < 3 {
		return s, nil
	}
	third := int32(c.faultyPods / 3)
	err = s.phase(ctx, fmt.Sprintf("faulty: %s pods up (a third crash-looping, restarted once; a third never Ready)", thousands(int64(3*third))), func(ctx context.Context) error {
		return s.podsUp(ctx,
			int32Deployment{"faulty-steady", roleSteady, third},
			int32Deployment{"faulty-crash", roleCrash, third},
			int32Deployment{"faulty-probe", roleProbeBad, third})
	})
	if err != nil {
		return s, err
	}
	s.note("faulty pods up: %s", w.faultySummary())
	err = s.phase(ctx, fmt.Sprintf("faulty: held %s", c.faultySteady), func(ctx context.Context) error { return s.hold(ctx, c.faultySteady) })
	if err != nil {
		return s, err
	}
	s.note("faulty pods after %s: %s", c.faultySteady, w.faultySummary())
	err = s.phase(ctx, fmt.Sprintf("faulty: %s pods deleted", thousands(int64(3*third))), s.podsGone)
	return s, err
}

// startNodes starts the side's node process; for KWOK it also creates the
// Nodes (KWOK plays Nodes that exist; actorlet's nodes register
// themselves).
func (s *side) startNodes(ctx context.Context, cp controlPlane, prefix string) error {
	c := s.cfg
	width := len(fmt.Sprint(c.nodes - 1))
	var err error
	switch s.name {
	case "kwok":
		stages := filepath.Join(filepath.Dir(c.kwok), "stages.yaml")
		s.proc, err = startNodeProc("kwok", c.out, c.kwok, nil, kwokArgs(cp.adminKubeconfig(), stages, c.kwokAddr)...)
		if err != nil {
			return err
		}
		names := make([]string, c.nodes)
		for i := range names {
			names[i] = fmt.Sprintf("%s%0*d", prefix, width, i)
		}
		return createNodes(ctx, s.cs, names, maxPods, 20)
	case "actorlet":
		args := []string{"fleet", "--kubeconfig=" + cp.adminKubeconfig(), fmt.Sprintf("--nodes=%d", c.nodes),
			"--name-prefix=" + prefix, "--journal=memory",
			"--node-labels=" + fleetLabel + "=true", "--register-with-taints=" + fleetLabel + "=true:NoSchedule",
			"--cpu=" + nodeCPU, "--memory=" + nodeMemory, fmt.Sprintf("--max-pods=%d", maxPods),
			"--status-address=" + c.fleetAddress, "--log-level=warn"}
		args = append(args, strings.Fields(c.fleetArgs)...)
		var env []string
		if c.fleetMemLimit != "" {
			env = []string{"GOMEMLIMIT=" + c.fleetMemLimit}
		}
		s.proc, err = startNodeProc("actorlet-fleet", c.out, c.actorlet, env, args...)
		return err
	default:
		return fmt.Errorf("unknown side %q (kwok, actorlet)", s.name)
	}
}

// commit is the checkout's short commit, "+dirty" when it has changes.
func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty=+dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
