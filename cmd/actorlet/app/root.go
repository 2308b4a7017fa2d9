// Package app holds actorlet's commands. It wires the packages together and
// owns nothing else.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X .../app.Version=...".
var Version = "v0.1.0-dev"

// KubernetesVersion is the kubelet release whose flags, configuration and
// API actorlet implements; `kubelet --version` reports it (as
// "Kubernetes v1.37.2-actorlet"), and so does the Node's kubeletVersion.
const KubernetesVersion = "v1.37.2-actorlet"

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs the actorlet command line and returns the exit code. Invoked
// under the name kubelet, or with a first argument that is a flag (or none),
// actorlet is the kubelet: the node runs with the kubelet's flags and
// defaults. Otherwise the first argument names a subcommand.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := execute(ctx, filepath.Base(os.Args[0]), args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "actorlet:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// execute dispatches a command line of the program invoked as name.
func execute(ctx context.Context, name string, args []string) error {
	if name == "kubelet" || len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runKubelet(ctx, args, kubeletMode)
	}
	root := NewRootCommand()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// NewRootCommand returns the actorlet command with its subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "actorlet",
		Short: "A Kubernetes node agent whose every decision is journaled and replayable",
		Long: `A Kubernetes node agent whose every decision is journaled and replayable.

Without a subcommand (or invoked as kubelet), actorlet is the kubelet: it takes every
flag of the kubelet v1.37 with the kubelet's defaults (actorlet --help lists them).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newSimRuntimeCommand(), newJournalCommand(), newVersionCommand())
	root.AddCommand(newCRIProxyCommand(), newSimulateCommand(), newFleetCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print actorlet's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "actorlet %s (kubelet %s)\n", Version, KubernetesVersion)
			return nil
		},
	}
}
