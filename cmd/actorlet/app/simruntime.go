package app

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/cri/sim"
)

func newSimRuntimeCommand() *cobra.Command {
	var (
		log     logOptions
		fo      faultOptions
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
pulling an image whose reference contains "notfound" fails with NotFound.
--faults injects a seeded fault plan into every call (errors, hangs, latency, event faults,
restarts that keep, reboot or wipe the runtime's state); CRI misuse stays recorded in the
verbose Status (info "sim": violations).`,
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
			plan, seed, err := fo.load(logger)
			if err != nil {
				return err
			}
			rt, err := sim.New(sim.Options{PodCIDR: cidr, HostIP: hostIP, Latency: lat, Logger: logger, Faults: plan, FaultSeed: seed})
			if err != nil {
				return err
			}
			defer rt.Close()
			stopMetrics, err := fo.serveMetrics(cmd.Context(), rt.Faults(), logger)
			if err != nil {
				return err
			}
			defer stopMetrics()
			logger.Info("simulated runtime serving", zap.String("listen", listen), zap.String("podCIDR", cidr))
			err = sim.Serve(cmd.Context(), listen, rt)
			in := rt.Info()
			logger.Info("simulated runtime stopped", zap.Uint64("seed", seed), faultTotals(rt.Faults()),
				zap.Int("restarts", in.Restarts), zap.Int("violations", in.ViolationCount), zap.Strings("firstViolations", in.Violations[:min(len(in.Violations), 10)]), zap.Error(err))
			return err
		},
	}
	fs := cmd.Flags()
	log.addFlags(fs)
	fo.addFlags(fs, "none")
	fs.StringVar(&listen, "listen", "unix:///run/actorlet/sim.sock", "where to serve the CRI (unix:///path)")
	fs.StringVar(&cidr, "pod-cidr", sim.DefaultPodCIDR, "the CIDR pod IPs are allocated from")
	fs.StringVar(&hostIP, "host-ip", sim.DefaultHostIP, "the IP of hostNetwork sandboxes")
	fs.StringVar(&latency, "latency", "", "per-RPC latency, e.g. RunPodSandbox=50ms,PullImage=200ms")
	return cmd
}
