package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func newJournalCommand() *cobra.Command {
	var (
		rootDir string
		output  string
	)
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Read the journal of a node (running, stopped, or a copy of its root dir)",
		Long: "Read the journal of a node. A stopped node's journal.db is read directly; a running node's\n" +
			"(whose file is locked) through the copy it serves on <root-dir>/" + journal.SocketName + ".",
	}
	cmd.PersistentFlags().StringVar(&rootDir, "root-dir", "/var/lib/actorlet", "the node's root dir (holds journal.db)")
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	format := func() (bool, error) {
		switch output {
		case "text":
			return false, nil
		case "json":
			return true, nil
		}
		return false, fmt.Errorf("--output %q: want text or json", output)
	}
	open := func(ctx context.Context) (*journalView, error) { return openJournalView(ctx, rootDir) }
	cmd.AddCommand(&cobra.Command{
		Use:   "pods",
		Short: "List the pods in the journal",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := format()
			if err != nil {
				return err
			}
			j, err := open(cmd.Context())
			if err != nil {
				return err
			}
			defer j.Close()
			return listPods(cmd.Context(), cmd.OutOrStdout(), j.Journal, asJSON)
		},
	})
	var (
		follow   bool
		interval time.Duration
		from     uint64
		showSpec bool
	)
	events := &cobra.Command{
		Use:   "events [namespace/name | uid]",
		Short: "Print the node's events (--follow: and then its new events); with a pod, that pod's timeline",
		Long: "Without a pod: every event of the node in journal order, from position --from, one line each\n" +
			"(POSITION TIME POD SEQ EVENT DESCRIPTION; -o json: the lines of GET /events on <root-dir>/" + journal.SocketName + ").\n" +
			"The position is the cursor: a reader that handled the event at position N resumes with --from N+1.\n" +
			"With --follow it reads the running node's stream and waits for new events.\n" +
			"With a pod: that pod's timeline: a summary (phase, each container's state, restarts and last state, why\n" +
			"the pod stopped, its spec's digest; --show-spec: the spec too), then its snapshot and events, each with the\n" +
			"kubelet's event reasons (Pulled, Created, Started, BackOff, Unhealthy, ...) where it has them\n" +
			"(SEQ TIME EVENT REASONS DESCRIPTION; -o json: one line per event, no summary, the spec with --show-spec).\n" +
			"--follow reads the journal again every --interval.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := format()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return nodeEvents(cmd.Context(), cmd.OutOrStdout(), rootDir, from, follow, asJSON)
			}
			if cmd.Flags().Changed("from") {
				return errors.New("--from is a position in the node's stream: give it without a pod")
			}
			opts := timelineOptions{asJSON: asJSON, showSpec: showSpec, now: time.Now()}
			j, err := open(cmd.Context())
			if err != nil {
				return err
			}
			uid, last, err := podEvents(cmd.Context(), cmd.OutOrStdout(), j.Journal, args[0], 0, opts)
			j.Close()
			if err != nil || !follow {
				return err
			}
			return followEvents(cmd.Context(), cmd.OutOrStdout(), open, uid, last, interval, opts)
		},
	}
	events.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until interrupted")
	events.Flags().DurationVar(&interval, "interval", time.Second, "with a pod and --follow, how often to look for new events")
	events.Flags().Uint64Var(&from, "from", 1, "without a pod, the position of the first event to print")
	events.Flags().BoolVar(&showSpec, "show-spec", false, "with a pod, print its spec as journaled (secret values are never journaled)")
	cmd.AddCommand(events)
	cmd.AddCommand(&cobra.Command{
		Use:   "verify",
		Short: "Check the journal; exit 0 only when it is sound",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := format()
			if err != nil {
				return err
			}
			j, err := open(cmd.Context())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer j.Close()
			verr := j.Verify(cmd.Context())
			uids, err := j.Pods(cmd.Context())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if asJSON {
				res := verifyResult{Path: j.path, Sound: verr == nil, Pods: len(uids)}
				var ce *journal.CorruptError
				if errors.As(verr, &ce) {
					for _, p := range ce.Problems {
						res.Problems = append(res.Problems, problemJSON{PodUID: p.PodUID, Seq: p.Seq, Detail: p.Detail})
					}
				} else if verr != nil {
					res.Error = verr.Error()
				}
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(res); err != nil {
					return err
				}
				if verr != nil {
					return &exitError{code: 1, err: verr}
				}
				return nil
			}
			if verr != nil {
				return &exitError{code: 1, err: verr}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "journal %s is sound: %d pods\n", j.path, len(uids))
			return nil
		},
	})
	cmd.AddCommand(newJournalReplayCommand(&rootDir, format))
	return cmd
}

type verifyResult struct {
	Path     string        `json:"path"`
	Sound    bool          `json:"sound"`
	Pods     int           `json:"pods"`
	Problems []problemJSON `json:"problems,omitempty"`
	Error    string        `json:"error,omitempty"`
}

type problemJSON struct {
	PodUID string `json:"podUID,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	Detail string `json:"detail"`
}

type podRow struct {
	uid, name, state string
	seq              uint64
	events           int
}

type podJSON struct {
	UID    string `json:"uid"`
	Pod    string `json:"pod"`
	State  string `json:"state"`
	Seq    uint64 `json:"seq"`
	Events int    `json:"events"`
}

func listPods(ctx context.Context, w io.Writer, j *journal.Journal, asJSON bool) error {
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
	if asJSON {
		out := make([]podJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, podJSON{UID: r.uid, Pod: r.name, State: r.state, Seq: r.seq, Events: r.events})
		}
		return json.NewEncoder(w).Encode(out)
	}
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

type eventJSON struct {
	Seq         uint64 `json:"seq"`
	Time        string `json:"time"`
	Event       string `json:"event"`
	Description string `json:"description,omitempty"`
	// Reasons are the kubelet's event reasons for it (see eventReasons).
	Reasons []string `json:"reasons,omitempty"`
	// SpecDigest and Spec (with --show-spec) of an event that sets the
	// pod's spec.
	SpecDigest string          `json:"spec_digest,omitempty"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	// Snapshot marks the line of a snapshot: the events up to Seq were
	// compacted into it.
	Snapshot bool `json:"snapshot,omitempty"`
}

// timelineOptions say how a pod's timeline is printed: as JSON lines, with
// its spec, and the time its summary is as of.
type timelineOptions struct {
	asJSON, showSpec bool
	now              time.Time
}

// podEvents prints the timeline of the pod ref (a UID, or namespace/name):
// its summary (text only), then its events after seq after (and its
// snapshot if that covers more); it returns the pod's UID and the last seq
// printed.
func podEvents(ctx context.Context, w io.Writer, j *journal.Journal, ref string, after uint64, opts timelineOptions) (string, uint64, error) {
	streams, err := j.LoadAll(ctx)
	if err != nil {
		return "", 0, err
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
			return "", 0, fmt.Errorf("no pod %q in journal %s (try `actorlet journal pods`)", ref, j.Path())
		case 1:
			uid = matches[0]
		default:
			return "", 0, fmt.Errorf("%d pods are named %q: give a UID (%s)", len(matches), ref, strings.Join(matches, ", "))
		}
	}
	s := streams[uid]
	if len(s.Events) == 0 && s.Snapshot == nil {
		return "", 0, errors.New("pod " + uid + " has no events")
	}
	st, err := actors.Restore(uid, s.Snapshot, s.Events)
	if err != nil {
		return "", 0, err
	}
	if !opts.asJSON {
		if err := printSummary(w, uid, st, opts.now, opts.showSpec); err != nil {
			return "", 0, err
		}
	}
	last, err := printEvents(w, s, st.Pod, after, opts)
	return uid, last, err
}

// printEvents prints the stream's events after seq after, and its snapshot
// if that covers events after it; it returns the last seq printed (after if
// none). pod is the pod's spec (nil for an orphan), for the reasons.
func printEvents(w io.Writer, s *journal.Stream, pod *corev1.Pod, after uint64, opts timelineOptions) (uint64, error) {
	asJSON := opts.asJSON
	enc := json.NewEncoder(w)
	last := after
	if snap := s.Snapshot; snap != nil && snap.Seq > after {
		at := time.Unix(0, snap.TimeUnixNano).UTC().Format(time.RFC3339Nano)
		if asJSON {
			if err := enc.Encode(eventJSON{Seq: snap.Seq, Time: at, Event: "Snapshot", Snapshot: true}); err != nil {
				return last, err
			}
		} else {
			fmt.Fprintf(w, "%6d  %s  (snapshot: earlier events compacted)\n", snap.Seq, at)
			describeSnapshot(w, snap.State)
		}
		last = snap.Seq
	}
	for _, env := range s.Events {
		if env.Seq <= last {
			continue
		}
		at := time.Unix(0, env.TimeUnixNano).UTC().Format(time.RFC3339Nano)
		reasons, desc := timelineLine(pod, env.Event)
		if asJSON {
			digest, _ := eventSpec(env.Event)
			if err := enc.Encode(eventJSON{Seq: env.Seq, Time: at, Event: env.Event.Name(), Description: env.Event.Describe(time.Time{}),
				Reasons: eventReasons(pod, env.Event), SpecDigest: digest, Spec: specJSON(env.Event, opts.showSpec)}); err != nil {
				return last, err
			}
		} else {
			fmt.Fprintf(w, "%6d  %-30s  %-20s %-16s %s\n", env.Seq, at, env.Event.Name(), reasons, desc)
		}
		last = env.Seq
	}
	return last, nil
}

// followEvents prints pod uid's events after seq last as they are
// journaled, reading the journal again every interval, until ctx ends. A pod
// that is deleted from the journal (compacted after its retention) ends it.
func followEvents(ctx context.Context, w io.Writer, open func(context.Context) (*journalView, error), uid string, last uint64,
	interval time.Duration, opts timelineOptions) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		j, err := open(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		s, err := j.Load(ctx, uid)
		j.Close()
		switch {
		case errors.Is(err, journal.ErrNotFound):
			return fmt.Errorf("pod %s is no longer in the journal", uid)
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		var pod *corev1.Pod
		if st, err := actors.Restore(uid, s.Snapshot, s.Events); err == nil {
			pod = st.Pod
		}
		if last, err = printEvents(w, s, pod, last, opts); err != nil {
			return err
		}
	}
}

// journalView is a journal opened read-only for the journal commands: the
// file itself, or a copy fetched from the running node that holds it.
type journalView struct {
	*journal.Journal
	// path is the node's journal file (not the copy's).
	path string
	tmp  string
}

// openJournalView opens the journal in rootDir read-only; if a running node
// holds it (ErrLocked), it reads the copy the node serves on its socket.
func openJournalView(ctx context.Context, rootDir string) (*journalView, error) {
	opts := journal.Options{Logger: zap.NewNop(), OpenTimeout: 200 * time.Millisecond}
	j, err := journal.OpenReadOnly(ctx, rootDir, opts)
	if err == nil {
		return &journalView{Journal: j, path: j.Path()}, nil
	}
	if !errors.Is(err, journal.ErrLocked) {
		return nil, err
	}
	tmp, terr := os.MkdirTemp("", "actorlet-journal-")
	if terr != nil {
		return nil, terr
	}
	if ferr := journal.FetchCopy(ctx, rootDir, tmp); ferr != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("%w; and the running node's copy: %w", err, ferr)
	}
	j, err = journal.OpenReadOnly(ctx, tmp, opts)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("the running node's copy of its journal: %w", err)
	}
	return &journalView{Journal: j, path: filepath.Join(rootDir, journal.FileName), tmp: tmp}, nil
}

// Close closes the journal and removes the copy, if any.
func (v *journalView) Close() {
	_ = v.Journal.Close()
	if v.tmp != "" {
		_ = os.RemoveAll(v.tmp)
	}
}
