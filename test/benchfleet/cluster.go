package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// controlPlane is one control plane of test/e2e/cluster.sh under
// $ACTORLET_CLUSTER_PREFIX.
type controlPlane struct {
	script, prefix string
	// qps is the scheduler's and the controller-manager's client QPS
	// (ACTORLET_CONTROL_PLANE_QPS), inflight the apiserver's
	// --max-requests-inflight (ACTORLET_APISERVER_MAX_REQUESTS_INFLIGHT).
	qps, inflight int
}

// run runs `cluster.sh <verb>`, its output on stderr.
func (c controlPlane) run(ctx context.Context, verb string) error {
	cmd := exec.CommandContext(ctx, c.script, verb)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(),
		"ACTORLET_CLUSTER_PREFIX="+c.prefix,
		"ACTORLET_CONTROL_PLANE_QPS="+strconv.Itoa(c.qps),
		"ACTORLET_APISERVER_MAX_REQUESTS_INFLIGHT="+strconv.Itoa(c.inflight))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", c.script, verb, err)
	}
	return nil
}

func (c controlPlane) adminKubeconfig() string { return filepath.Join(c.prefix, "admin.kubeconfig") }

// adminClient is a client of the admin identity (system:masters) without
// client-side rate limits worth the name: the harness's own calls must not
// be what is measured.
func (c controlPlane) adminClient() (*rest.Config, kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.adminKubeconfig())
	if err != nil {
		return nil, nil, fmt.Errorf("admin kubeconfig %s: %w", c.adminKubeconfig(), err)
	}
	// The CA's bytes, not its path: client-go caches TLS transports by the
	// config, path included, and every control plane has a new CA under the
	// same path.
	if cfg.CAFile != "" {
		if cfg.CAData, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, nil, fmt.Errorf("CA of %s: %w", c.adminKubeconfig(), err)
		}
		cfg.CAFile = ""
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("admin client: %w", err)
	}
	return cfg, cs, nil
}
