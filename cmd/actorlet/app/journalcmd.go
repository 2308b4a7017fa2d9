package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func newJournalCommand() *cobra.Command {
	var rootDir string
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Read the journal of a node (stopped, or a copy of its root dir)",
	}
	cmd.PersistentFlags().StringVar(&rootDir, "root-dir", "/var/lib/actorlet", "the node's root dir (holds journal.db)")
	open := func(ctx context.Context) (*journal.Journal, error) {
		return journal.OpenReadOnly(ctx, rootDir, journal.Options{Logger: zap.NewNop()})
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "pods",
		Short: "List the pods in the journal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer j.Close()
			return listPods(cmd.Context(), cmd.OutOrStdout(), j)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "events <namespace/name | uid>",
		Short: "Print the timeline of one pod's events",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer j.Close()
			return podEvents(cmd.Context(), cmd.OutOrStdout(), j, args[0])
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "verify",
		Short: "Check the journal; exit 0 only when it is sound",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := open(cmd.Context())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer j.Close()
			if err := j.Verify(cmd.Context()); err != nil {
				return &exitError{code: 1, err: err}
			}
			uids, err := j.Pods(cmd.Context())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "journal %s is sound: %d pods\n", j.Path(), len(uids))
			return nil
		},
	})
	return cmd
}

type podRow struct {
	uid, name, state string
	seq              uint64
	events           int
}

func listPods(ctx context.Context, w io.Writer, j *journal.Journal) error {
	streams, err := j.LoadAll(ctx)
	if err != nil {
		return err
	}
	var rows []podRow
	for uid, s := range streams {
		st, err := actors.Restore(uid, s.Snapshot, s.Events)
		if err != nil {
			return err
		}
		rows = append(rows, podRow{uid: uid, name: podName(st), state: podState(st), seq: st.P.Seq, events: len(s.Events)})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].name+rows[a].uid < rows[b].name+rows[b].uid })
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UID\tPOD\tSTATE\tSEQ\tEVENTS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", r.uid, r.name, r.state, r.seq, r.events)
	}
	return tw.Flush()
}

func podName(st *lifecycle.State) string {
	if st.Pod == nil {
		return "<orphan>"
	}
	return st.Pod.Namespace + "/" + st.Pod.Name
}

func podState(st *lifecycle.State) string {
	p := st.P
	switch {
	case p.Removed:
		return "Removed"
	case p.Rejected:
		return "Rejected(" + p.Reason + ")"
	case p.Terminated:
		return "Terminated(" + p.FinalPhase + ")"
	case p.Terminating:
		return "Terminating"
	default:
		return string(lifecycle.Phase(st, time.Now()))
	}
}

// describeSnapshot prints what a snapshot keeps of each container: its last
// attempt and how it ended, which its compacted events told.
func describeSnapshot(w io.Writer, st *pb.PodState) {
	names := make([]string, 0, len(st.GetContainers()))
	for name := range st.GetContainers() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := st.Containers[name]
		fmt.Fprintf(w, "        container %s: attempt=%d %s exit_code=%d reason=%q restarts=%d\n",
			name, c.Attempt, strings.TrimPrefix(c.Phase.String(), "CONTAINER_"), c.ExitCode, c.Reason, c.RestartCount)
	}
}

func podEvents(ctx context.Context, w io.Writer, j *journal.Journal, ref string) error {
	streams, err := j.LoadAll(ctx)
	if err != nil {
		return err
	}
	uid := ""
	if _, ok := streams[ref]; ok {
		uid = ref
	} else {
		name := ref
		if !strings.Contains(name, "/") {
			name = "default/" + name
		}
		var matches []string
		for id, s := range streams {
			if st, err := actors.Restore(id, s.Snapshot, s.Events); err == nil && podName(st) == name {
				matches = append(matches, id)
			}
		}
		sort.Strings(matches)
		switch len(matches) {
		case 0:
			return fmt.Errorf("no pod %q in journal %s (try `actorlet journal pods`)", ref, j.Path())
		case 1:
			uid = matches[0]
		default:
			return fmt.Errorf("%d pods are named %q: give a UID (%s)", len(matches), ref, strings.Join(matches, ", "))
		}
	}
	s := streams[uid]
	if s.Snapshot != nil {
		fmt.Fprintf(w, "%6d  %s  (snapshot: earlier events compacted)\n", s.Snapshot.Seq, time.Unix(0, s.Snapshot.TimeUnixNano).UTC().Format(time.RFC3339Nano))
		describeSnapshot(w, s.Snapshot.State)
	}
	if len(s.Events) == 0 && s.Snapshot == nil {
		return errors.New("pod " + uid + " has no events")
	}
	for _, env := range s.Events {
		fmt.Fprintf(w, "%6d  %-30s  %-20s %s\n", env.Seq, time.Unix(0, env.TimeUnixNano).UTC().Format(time.RFC3339Nano), env.Event.Name(), env.Event.Describe(time.Time{}))
	}
	return nil
}
