package app

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/cri/sim"
)

func newSimRuntimeCommand() *cobra.Command {
	var (
		log     logOptions
		listen  string
		cidr    string
		hostIP  string
		latency string
	)
	cmd := &cobra.Command{
		Use:   "sim-runtime",
		Short: "Serve the simulated container runtime on a CRI socket",
		Long: `Serve actorlet's simulated CRI runtime (RuntimeService and ImageService) on a unix socket,
so that actorlet, crictl or any CRI client can drive it. Containers follow their env:
SIM_EXIT_AFTER=<duration> exits that long after start with SIM_EXIT_CODE (default 0);
pulling an image whose reference contains "notfound" fails with NotFound.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := log.build()
			if err != nil {
				return err
			}
			defer logger.Sync() //nolint:errcheck // stderr
			lat, err := parseLatency(latency)
			if err != nil {
				return err
			}
			rt, err := sim.New(sim.Options{PodCIDR: cidr, HostIP: hostIP, Latency: lat, Logger: logger})
			if err != nil {
				return err
			}
			defer rt.Close()
			logger.Info("simulated runtime serving", zap.String("listen", listen), zap.String("podCIDR", cidr))
			return sim.Serve(cmd.Context(), listen, rt)
		},
	}
	fs := cmd.Flags()
	log.addFlags(fs)
	fs.StringVar(&listen, "listen", "unix:///run/actorlet/sim.sock", "where to serve the CRI (unix:///path)")
	fs.StringVar(&cidr, "pod-cidr", sim.DefaultPodCIDR, "the CIDR pod IPs are allocated from")
	fs.StringVar(&hostIP, "host-ip", sim.DefaultHostIP, "the IP of hostNetwork sandboxes")
	fs.StringVar(&latency, "latency", "", "per-RPC latency, e.g. RunPodSandbox=50ms,PullImage=200ms")
	return cmd
}
