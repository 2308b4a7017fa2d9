package journal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Error kinds. Every error the package returns wraps at most a few of these
// (test with errors.Is) and names the pod UID or the file it is about.
var (
	// ErrLocked: another process (or another Open in this process) holds the
	// journal file's lock.
	ErrLocked = errors.New("journal locked")
	// ErrClosed: the journal was closed.
	ErrClosed = errors.New("journal closed")
	// ErrSequence: the sequence numbers of an Append or SaveSnapshot do not
	// continue the pod's stream. Usually a sign of two writers for one pod.
	ErrSequence = errors.New("journal sequence mismatch")
	// ErrCorrupt: the file or a record in it is damaged. The concrete error is
	// a *CorruptError or a *QuarantinedError.
	ErrCorrupt = errors.New("journal corrupt")
	// ErrNotFound: nothing is stored for the pod, or the journal file does not
	// exist (OpenReadOnly).
	ErrNotFound = errors.New("not found in journal")
	// ErrInvalid: a record given to Append or SaveSnapshot is malformed
	// (missing pod_uid or event, pod_uid not the pod's, seq 0, ...).
	ErrInvalid = errors.New("invalid journal record")
	// ErrSchemaVersion: a record or the file has a schema version this
	// build does not know (a newer actorlet wrote it).
	ErrSchemaVersion = errors.New("unsupported journal schema version")
	// ErrReadOnly: a write on a journal opened with OpenReadOnly.
	ErrReadOnly = errors.New("journal opened read-only")
)

// Problem is one inconsistency found in the journal.
type Problem struct {
	// PodUID is the pod whose stream or snapshot is damaged; empty for
	// problems of the file as a whole.
	PodUID string
	// Seq is the sequence number of the damaged record, 0 if none applies.
	Seq uint64
	// Detail says what is wrong.
	Detail string
}

func (p Problem) String() string {
	switch {
	case p.PodUID == "":
		return p.Detail
	case p.Seq == 0:
		return fmt.Sprintf("pod %q: %s", p.PodUID, p.Detail)
	default:
		return fmt.Sprintf("pod %q seq %d: %s", p.PodUID, p.Seq, p.Detail)
	}
}

// CorruptError lists what Verify, Load or LoadAll found damaged in a journal
// file. errors.Is(err, ErrCorrupt) holds for it.
type CorruptError struct {
	Path     string
	Problems []Problem
}

// maxProblemsInMessage bounds the length of CorruptError.Error; the full list
// stays in Problems.
const maxProblemsInMessage = 10

func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "journal %s is corrupt: %d problem(s): ", e.Path, len(e.Problems))
	for i, p := range e.Problems {
		if i == maxProblemsInMessage {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Is reports ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// PodUIDs returns the sorted UIDs of the pods with problems.
func (e *CorruptError) PodUIDs() []string {
	var uids []string
	for _, p := range e.Problems {
		if p.PodUID != "" {
			uids = append(uids, p.PodUID)
		}
	}
	slices.Sort(uids)
	return slices.Compact(uids)
}

// QuarantinedError reports that Open found the journal file damaged, moved it
// aside (never deleting it) and started a fresh, empty journal in its place.
// It is not returned by Open (which succeeds) but by Journal.Quarantined, so
// that the caller can report it loudly: the node has lost its memory of what
// it did and must rebuild from the pod sources and the container runtime.
// errors.Is(err, ErrCorrupt) holds for it, and it unwraps to Reason.
type QuarantinedError struct {
	// Path is the journal file's path; a fresh journal is there now.
	Path string
	// MovedTo is where the damaged file is now, journal.db.corrupt-<UTC time>.
	MovedTo string
	// At is when it was moved (from Options.Clock).
	At time.Time
	// Reason is what was wrong with it.
	Reason error
}

func (e *QuarantinedError) Error() string {
	return fmt.Sprintf("journal %s was corrupt and was moved to %s; a fresh empty journal replaces it: %v",
		e.Path, e.MovedTo, e.Reason)
}

// Unwrap returns ErrCorrupt and the reason.
func (e *QuarantinedError) Unwrap() []error { return []error{ErrCorrupt, e.Reason} }
