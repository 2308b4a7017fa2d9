package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/journal/replay"
)

// reportedStatusNote says, in every replay's output, what the status was
// compared with.
const reportedStatusNote = "the journal does not record reported statuses: each pod's derived status was compared " +
	"with the one its restored snapshot derives"

// newJournalReplayCommand is `actorlet journal replay`. rootDir and format
// are the journal command's persistent --root-dir and --output.
func newJournalReplayCommand(rootDir *string, format func() (bool, error)) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "replay [<namespace/name | uid>...]",
		Short: "Re-fold each pod's events and name every divergence from its snapshots; exit 0 only when there is none",
		Long: "Re-fold each pod's journaled events (from seq 1, or from its snapshot when earlier events were compacted)\n" +
			"with the fold the node uses, and compare them with the stored snapshot, with the snapshot that would be\n" +
			"taken of the folded state, and the derived status with the one that snapshot restores. Every divergence\n" +
			"is named (pod, seq, field, folded and stored value); damaged records are reported as damage. Exits 1 on\n" +
			"any divergence or damage. " + reportedStatusNote + ".",
		RunE: func(cmd *cobra.Command, args []string) error {
			asJSON, err := format()
			if err != nil {
				return err
			}
			if file != "" && cmd.Flag("root-dir").Changed {
				return fmt.Errorf("give --root-dir or --journal, not both")
			}
			var j *journalView
			if file != "" {
				j, err = openJournalFile(cmd.Context(), file)
			} else {
				j, err = openJournalView(cmd.Context(), *rootDir)
			}
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer j.Close()
			r, err := replay.Journal(cmd.Context(), j.Journal, args)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			r.Path = j.path
			if asJSON {
				err = json.NewEncoder(cmd.OutOrStdout()).Encode(replayJSON{Report: r, Note: reportedStatusNote})
			} else {
				err = printReplay(cmd.OutOrStdout(), r)
			}
			if err != nil {
				return err
			}
			if !r.Clean() {
				return &exitError{code: 1, err: fmt.Errorf("journal %s: %d divergences, %d damaged",
					r.Path, r.Summary.Divergences, r.Summary.Damaged)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "journal", "", "a journal file to replay instead of <root-dir>/"+journal.FileName+
		" (a copy of a node's, for instance)")
	return cmd
}

type replayJSON struct {
	*replay.Report
	Note string `json:"note"`
}

// printReplay prints a table of the pods, then every divergence and damage,
// then the note and the summary line.
func printReplay(w io.Writer, r *replay.Report) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tUID\tFROM\tEVENTS\tSNAPSHOTS\tPHASE\tRESULT")
	for _, p := range r.Pods {
		name, phase, result := p.Name, p.Phase, "ok"
		if name == "" {
			name = "<unknown>"
		}
		if phase == "" {
			phase = "-"
		}
		switch {
		case len(p.Damage) > 0:
			result = fmt.Sprintf("DAMAGED (%d)", len(p.Damage))
		case len(p.Divergences) > 0:
			result = fmt.Sprintf("DIVERGED (%d)", len(p.Divergences))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", name, p.UID, p.From, p.Events, p.Snapshots, phase, result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Pods {
		for _, d := range p.Divergences {
			fmt.Fprintln(w, "divergence:", d)
		}
		for _, d := range p.Damage {
			fmt.Fprintln(w, "damage:", d)
		}
	}
	for _, d := range r.FileDamage {
		fmt.Fprintln(w, "damage:", d)
	}
	fmt.Fprintln(w, "note:", reportedStatusNote)
	_, err := fmt.Fprintf(w, "journal %s: %s\n", r.Path, r.Summary)
	return err
}

// openJournalFile opens the journal file path read-only: in place if it is
// a journal directory's journal.db (through the running node's copy if the
// node holds it), else from a copy in a temporary directory.
func openJournalFile(ctx context.Context, path string) (*journalView, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--journal %s: %w", path, err)
	}
	if filepath.Base(path) == journal.FileName {
		v, err := openJournalView(ctx, filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		v.path = path
		return v, nil
	}
	tmp, err := os.MkdirTemp("", "actorlet-journal-")
	if err != nil {
		return nil, err
	}
	if err := copyFile(path, filepath.Join(tmp, journal.FileName)); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("--journal %s: %w", path, err)
	}
	v, err := openJournalView(ctx, tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("--journal %s: %w", path, err)
	}
	v.path, v.tmp = path, tmp
	return v, nil
}

// copyFile copies the file from to the new file to (mode 0600: a journal
// holds pod specs).
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
