package journal

import (
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
)

// guard runs fn, turning a panic into a *CorruptError. bbolt panics on
// damaged pages instead of returning errors, and a page beyond the end of a
// truncated file faults (SIGBUS) when its mapping is touched; SetPanicOnFault
// turns that fault into a panic of this goroutine.
func guard(log *zap.Logger, path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			log.Error("bbolt panicked reading the journal; treating the file as corrupt",
				zap.String("path", path), zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			err = &CorruptError{Path: path, Problems: []Problem{{Detail: fmt.Sprintf("bbolt panicked: %v", r)}}}
		}
	}()
	return fn()
}

// view runs fn in a guarded read transaction and maps a closed database to
// ErrClosed.
func (j *Journal) view(fn func(tx *bolt.Tx) error) error {
	if j.closed.Load() {
		return ErrClosed
	}
	err := guard(j.log, j.path, func() error { return j.db.View(fn) })
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// viewIndexed is view for reads that use the index: pick copies what it
// needs from the index, and the read transaction that fn gets begins while
// the index is still read-locked. The transaction then holds at least every
// record the index knows: the writer publishes appends after their commit,
// and holds the index write-locked across commits that remove records.
func (j *Journal) viewIndexed(pick func(x *podIndex), fn func(tx *bolt.Tx) error) error {
	if j.closed.Load() {
		return ErrClosed
	}
	err := guard(j.log, j.path, func() error {
		tx, err := j.beginIndexed(pick)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		return fn(tx)
	})
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

func (j *Journal) beginIndexed(pick func(x *podIndex)) (*bolt.Tx, error) {
	j.idx.mu.RLock()
	defer j.idx.mu.RUnlock()
	pick(&j.idx.podIndex)
	return j.db.Begin(false)
}
