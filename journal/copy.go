package journal

import (
	"context"
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"
)

// WriteCopy writes a consistent copy of the journal file to w: a complete
// bbolt file as of one read transaction (bbolt's Tx.WriteTo), which
// OpenReadOnly can open. Writers are not held up.
func (j *Journal) WriteCopy(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("copy journal %s: %w", j.path, err)
	}
	var n int64
	err := j.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("copy journal %s: %w", j.path, err)
	}
	return n, nil
}
