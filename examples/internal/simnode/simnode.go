// Package simnode starts an actorlet node on the in-process simulated
// runtime, as `actorlet run --container-runtime-endpoint sim://` does (or
// on another in-process runtime, StartOn), for the examples: no root, no
// containerd, no cluster.
package simnode

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/serve"
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/podspec"
)

// Node is a running node and its simulated runtime.
type Node struct {
	*agent.Agent
	stopRuntime func()
}

// Start starts a node whose journal is in rootDir, running pods (an
// embedded pod source named "example"), with cfg's extension points set by
// with (nil for none). The simulated runtime lives in this process: its
// pods end with it, and a node started again on rootDir recreates them.
func Start(ctx context.Context, rootDir string, pods []*corev1.Pod, log *zap.Logger, with ...agent.Option) (*Node, error) {
	rt, err := sim.New(sim.Options{Logger: log.Named("sim")})
	if err != nil {
		return nil, err
	}
	n, err := StartOn(ctx, rt, sim.DefaultRuntimeName, rootDir, pods, log, with...)
	if err != nil {
		rt.Close()
		return nil, err
	}
	stop := n.stopRuntime
	n.stopRuntime = func() { stop(); rt.Close() }
	return n, nil
}

// StartOn is Start on the in-process runtime rt (the simulated runtime, or
// one of the user's), connected without a socket or gRPC (serve.Direct), whose
// name prefixes container IDs in pod statuses ("<runtimeName>://<id>").
// Stop disconnects it; closing rt is the caller's.
func StartOn(ctx context.Context, rt serve.Runtime, runtimeName, rootDir string, pods []*corev1.Pod, log *zap.Logger, with ...agent.Option) (*Node, error) {
	conn, stopConn := serve.Direct(rt, serve.DirectOptions{})
	client := cri.NewFromConn(conn, conn, cri.Options{Timeout: 10 * time.Second, Logger: log.Named("cri")})
	stopRuntime := func() { client.Close(); stopConn() }
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = 100*time.Millisecond, time.Second
	opts := []agent.Option{
		agent.WithNodeName("example"), agent.WithRootDir(rootDir), agent.WithRuntime(client, runtimeName),
		agent.WithPodConfig(podspec.Options{PodLogsDir: rootDir + "/logs"}), agent.WithLifecycle(lc),
		agent.WithRelistPeriod(time.Second), agent.WithLogger(log), agent.WithPods("example", pods),
		agent.WithActorOptions(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(zapslog.NewHandler(log.Named("protoactor").Core()))
		})),
	}
	a, err := agent.Start(ctx, append(opts, with...)...)
	if err != nil {
		stopRuntime()
		return nil, fmt.Errorf("start the node in %s: %w", rootDir, err)
	}
	return &Node{Agent: a, stopRuntime: stopRuntime}, nil
}

// Stop stops the node, then its runtime.
func (n *Node) Stop(ctx context.Context) error {
	err := n.Agent.Stop(ctx)
	n.stopRuntime()
	return err
}
