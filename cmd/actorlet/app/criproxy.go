package app

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/cri/proxy"
)

func newCRIProxyCommand() *cobra.Command {
	var (
		log           logOptions
		fo            faultOptions
		listen        string
		upstream      string
		upstreamImage string
	)
	cmd := &cobra.Command{
		Use:   "cri-proxy",
		Short: "Serve a CRI socket that forwards to a real runtime, with faults injected",
		Long: `Serve a CRI v1 socket (RuntimeService and ImageService) that forwards every call to the runtime
at --upstream (containerd, CRI-O, actorlet sim-runtime) and injects a seeded fault plan: errors,
hangs, latency, lost, duplicated and reordered container events, broken event streams and
runtime outages. Point any node agent (actorlet, the kubelet, crictl) at --listen for chaos
testing. The same seed and the same sequence of calls give the same faults.`,
		Example: `  actorlet cri-proxy --listen unix:///run/cri-proxy.sock \
    --upstream unix:///run/containerd/containerd.sock --faults default --seed 42
  crictl --runtime-endpoint unix:///run/cri-proxy.sock ps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := log.build()
			if err != nil {
				return err
			}
			defer logger.Sync() //nolint:errcheck // stderr
			plan, seed, err := fo.load(logger)
			if err != nil {
				return err
			}
			inj, err := faults.New(plan, seed, faults.Options{Logger: logger.Named("faults")})
			if err != nil {
				return err
			}
			up, closeUp, err := dialUpstream(upstream, upstreamImage)
			if err != nil {
				return err
			}
			defer closeUp()
			stopMetrics, err := fo.serveMetrics(cmd.Context(), inj, logger)
			if err != nil {
				return err
			}
			defer stopMetrics()
			logger.Info("cri-proxy serving", zap.String("listen", listen), zap.String("upstream", upstream))
			err = proxy.NewServer(proxy.New(up, logger.Named("proxy")), inj).Run(cmd.Context(), listen)
			logger.Info("cri-proxy stopped", zap.Uint64("seed", seed), faultTotals(inj), zap.Error(err))
			return err
		},
	}
	fs := cmd.Flags()
	log.addFlags(fs)
	fo.addFlags(fs, "")
	fs.StringVar(&listen, "listen", "", "where to serve the CRI (unix:///path)")
	fs.StringVar(&upstream, "upstream", "", "the runtime's CRI socket (unix:///path), e.g. unix:///run/containerd/containerd.sock")
	fs.StringVar(&upstreamImage, "upstream-image", "", "the image service's socket, if not --upstream's")
	for _, f := range []string{"listen", "upstream", "faults"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

// dialUpstream connects to the upstream runtime (and image service).
func dialUpstream(runtimeEndpoint, imageEndpoint string) (proxy.Upstream, func(), error) {
	rconn, err := cri.NewConn(runtimeEndpoint)
	if err != nil {
		return proxy.Upstream{}, nil, err
	}
	up := proxy.Upstream{Runtime: rconn, Image: rconn}
	conns := []*grpc.ClientConn{rconn}
	if imageEndpoint != "" && imageEndpoint != runtimeEndpoint {
		iconn, err := cri.NewConn(imageEndpoint)
		if err != nil {
			_ = rconn.Close()
			return proxy.Upstream{}, nil, err
		}
		up.Image = iconn
		conns = append(conns, iconn)
	}
	return up, func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}, nil
}
