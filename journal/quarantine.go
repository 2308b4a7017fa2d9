package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// quarantineTimeFormat is the UTC time in quarantine file names.
const quarantineTimeFormat = "20060102T150405Z"

// maxQuarantineNames bounds the search for a free quarantine name.
const maxQuarantineNames = 1000

// quarantine moves the damaged journal at path aside to
// path.corrupt-<UTC time> (with a .N suffix if that name is taken), never
// overwriting or deleting anything.
func quarantine(path string, reason error, now time.Time, log *zap.Logger) (*QuarantinedError, error) {
	base := path + ".corrupt-" + now.UTC().Format(quarantineTimeFormat)
	target := base
	for i := 1; ; i++ {
		err := moveNoReplace(path, target)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i == maxQuarantineNames {
			return nil, fmt.Errorf("journal %s is corrupt (%v) and could not be moved aside to %s: %w",
				path, reason, target, err)
		}
		target = fmt.Sprintf("%s.%d", base, i)
	}
	syncDir(filepath.Dir(path), log)
	q := &QuarantinedError{Path: path, MovedTo: target, At: now, Reason: reason}
	log.Error("journal was corrupt: moved it aside and started an empty journal; "+
		"this node's record of its pods is lost and will be rebuilt from the pod sources and the container runtime",
		zap.String("movedTo", target), zap.Error(reason))
	return q, nil
}

// moveNoReplace renames from to to, failing with fs.ErrExist if to exists.
// A hard link (which never replaces) is tried first; on file systems without
// hard links it falls back to a checked rename.
func moveNoReplace(from, to string) error {
	err := os.Link(from, to)
	if err == nil {
		return os.Remove(from)
	}
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, statErr := os.Lstat(to); statErr == nil {
		return fs.ErrExist
	}
	return os.Rename(from, to)
}
