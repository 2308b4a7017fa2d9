package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiversion "k8s.io/apimachinery/pkg/version"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

// mode is how a node command line is read: whose defaults, under which name.
type mode struct {
	profile kubeletconfig.Profile
	use     string
	stdout  io.Writer
	stderr  io.Writer
}

var (
	kubeletMode = mode{profile: kubeletconfig.KubeletProfile, use: "kubelet [flags]", stdout: os.Stdout, stderr: os.Stderr}
	runMode     = mode{profile: kubeletconfig.RunProfile, use: "actorlet run [flags]", stdout: os.Stdout, stderr: os.Stderr}
)

func newRunCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run the node agent with actorlet's defaults",
		Long: `Run the node agent: take the kubelet's flags (and actorlet's own), with actorlet's
defaults where they differ from the kubelet's: the kubelet API on 127.0.0.1, no QoS
cgroups, cgroup v1 allowed, --root-dir /var/lib/actorlet, --node-ip 127.0.0.1, port 0
meaning any free port. actorlet run --help lists the flags.`,
		// The flags are the kubelet's, parsed with its precedence rules.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			m := runMode
			m.stdout, m.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runKubelet(cmd.Context(), args, m)
		},
	}
}

// runKubelet runs a node from a kubelet command line (with actorlet's own
// flags), or answers --help and --version.
func runKubelet(ctx context.Context, args []string, m mode) error {
	parsed, own, err := parseCommandLine(args, m.profile, m.stderr)
	if err != nil {
		return err
	}
	switch g := parsed.Global; {
	case g.Help:
		fmt.Fprintf(m.stdout, "Usage:\n  %s\n\nFlags:\n%s\nOther commands: actorlet run, actorlet sim-runtime, actorlet journal, actorlet version.\n",
			m.use, parsed.FlagSet.FlagUsagesWrapped(100))
		return nil
	case g.Version == "raw":
		fmt.Fprintf(m.stdout, "%#v\n", versionInfo(KubernetesVersion))
		return nil
	case g.Version == "true":
		fmt.Fprintf(m.stdout, "Kubernetes %s\n", KubernetesVersion)
		return nil
	case strings.HasPrefix(string(g.Version), "v"):
		fmt.Fprintf(m.stdout, "Kubernetes %s\n", g.Version)
		return nil
	}
	nc, err := resolve(parsed, own, m.profile)
	if err != nil {
		return err
	}
	return runNode(ctx, nc)
}

// versionInfo is --version=raw's answer.
func versionInfo(v string) apiversion.Info {
	major, minor, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	return apiversion.Info{Major: major, Minor: minor, GitVersion: v, GoVersion: goVersion(), Compiler: "gc", Platform: platform()}
}

// parseLatency reads "Method=dur,Method=dur".
func parseLatency(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("latency %q: want Method=duration", kv)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("latency of %s: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}
