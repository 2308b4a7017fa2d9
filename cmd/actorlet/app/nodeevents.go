package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/journal"
)

// nodeEvents prints every event of the node in rootDir from position from,
// in log order: from the running node's stream on its journal socket (and,
// with follow, its new events until ctx ends), or from the file of a
// stopped node. Each line is printed once handed out, so a reader that
// stops halfway resumes from the position after its last line.
func nodeEvents(ctx context.Context, w io.Writer, rootDir string, from uint64, follow, asJSON bool) error {
	print := func(l journal.EventLine) error { return printEventLine(w, l, asJSON) }
	j, err := journal.OpenReadOnly(ctx, rootDir, journal.Options{Logger: zap.NewNop(), OpenTimeout: 200 * time.Millisecond})
	switch {
	case errors.Is(err, journal.ErrLocked):
		// A running node: its stream.
		err := journal.ReadEvents(ctx, rootDir, from, follow, print)
		if follow && ctx.Err() != nil {
			return nil // interrupted
		}
		return err
	case err != nil:
		return err
	}
	defer j.Close()
	if follow {
		return fmt.Errorf("--follow: no node is running on %s (its journal is not locked); without --follow the file is read", rootDir)
	}
	return j.Records(ctx, from, func(r journal.Record) error { return print(journal.NewEventLine(r)) })
}

// printEventLine prints one event: its JSON line, or a text line.
func printEventLine(w io.Writer, l journal.EventLine, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(l)
	}
	if l.Damage != "" {
		_, err := fmt.Fprintf(w, "%8d  %-30s  %-36s %5d  DAMAGED %s\n", l.Position, "", l.Pod, l.Seq, l.Damage)
		return err
	}
	_, err := fmt.Fprintf(w, "%8d  %-30s  %-36s %5d  %-20s %s\n", l.Position, l.Time, l.Pod, l.Seq, l.Event, l.Description)
	return err
}
