// Package app holds actorlet's commands. It wires the packages together and
// owns nothing else.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X .../app.Version=...".
var Version = "v0.1.0-dev"

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs the actorlet command line and returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCommand()
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "actorlet:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// NewRootCommand returns the actorlet command with its subcommands.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "actorlet",
		Short:         "A Kubernetes node agent whose every decision is journaled and replayable",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newSimRuntimeCommand(), newJournalCommand(), newVersionCommand())
	root.AddCommand(newCRIProxyCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print actorlet's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "actorlet %s\n", Version)
			return nil
		},
	}
}
