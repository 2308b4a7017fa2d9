package logrotate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Rotation is what one rotation of a container's log did.
type Rotation struct {
	// ContainerID is the container whose log was rotated.
	ContainerID string
	// Log is the path of the current log.
	Log string
	// Size is the size of the current log when it was rotated.
	Size int64
	// Rotated is the path the current log was renamed to, <Log>.<timestamp>; empty when the
	// rotation was postponed (Postponed) or failed.
	Rotated string
	// Removed lists the files removed: leftovers and the oldest rotated files.
	Removed []string
	// Compressed lists the rotated files gzipped (each now ends in ".gz").
	Compressed []string
	// Postponed is set when <Log>.<timestamp> or its .gz existed already (a rotation within the
	// same second): nothing was changed, and the next pass tries again.
	Postponed bool
}

// rotate rotates the current log at log, of container id, at time now; see the package doc for
// the steps. The Rotation is filled in as far as the rotation got, also on error.
func rotate(ctx context.Context, rt Runtime, id, log string, size int64, maxFiles int, now time.Time) (Rotation, error) {
	r := Rotation{ContainerID: id, Log: log, Size: size}
	rotated := log + "." + now.Format(TimestampFormat)
	for _, p := range []string{rotated, rotated + compressSuffix} {
		switch _, err := os.Lstat(p); {
		case err == nil:
			r.Postponed = true
			return r, nil
		case !errors.Is(err, fs.ErrNotExist):
			return r, fmt.Errorf("rotate %q: %w", log, err)
		}
	}

	files, err := listRotated(log)
	if err != nil {
		return r, fmt.Errorf("rotate %q: %w", log, err)
	}
	files, leftovers := splitLeftovers(files)
	for _, f := range leftovers {
		if err := removeFile(f.path); err != nil {
			return r, fmt.Errorf("rotate %q: remove leftover: %w", log, err)
		}
		r.Removed = append(r.Removed, f.path)
	}

	// Keep maxFiles-2 rotated files: with the one this rotation makes and the new current
	// log, that is maxFiles. Remove oldest first, so that a reader going through the files
	// in order is not cut off in the middle.
	if excess := len(files) - max(maxFiles-2, 0); excess > 0 {
		for _, f := range files[:excess] {
			if err := removeFile(f.path); err != nil {
				return r, fmt.Errorf("rotate %q: remove old rotated file: %w", log, err)
			}
			r.Removed = append(r.Removed, f.path)
		}
		files = files[excess:]
	}

	for _, f := range files {
		if f.kind != plain {
			continue
		}
		if err := ctx.Err(); err != nil {
			return r, fmt.Errorf("rotate %q: %w", log, err)
		}
		if err := compress(f.path); err != nil {
			return r, fmt.Errorf("rotate %q: %w", log, err)
		}
		r.Compressed = append(r.Compressed, f.path)
	}

	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("rotate %q: %w", log, err)
	}
	if err := os.Rename(log, rotated); err != nil {
		return r, fmt.Errorf("rotate %q: %w", log, err)
	}
	if err := rt.ReopenContainerLog(ctx, id); err != nil {
		// Put the log back where the runtime writes, so that the next pass retries.
		if rerr := os.Rename(rotated, log); rerr != nil {
			return r, fmt.Errorf("rotate %q: reopen container %q log: %w; renaming it back failed too, it stays at %q: %w",
				log, id, err, rotated, rerr)
		}
		return r, fmt.Errorf("rotate %q: reopen container %q log (renamed back): %w", log, id, err)
	}
	r.Rotated = rotated
	return r, nil
}

// removeFile removes path; a file already gone counts as removed.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
