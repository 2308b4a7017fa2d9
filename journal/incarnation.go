package journal

import (
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// keyIncarnation counts the journal's writable opens (meta bucket).
var keyIncarnation = []byte("incarnation")

// bumpIncarnation adds one to the count of writable opens and returns it:
// 1 for a journal opened for the first time, and more for each open after.
func bumpIncarnation(db *bolt.DB) (uint64, error) {
	var n uint64
	err := db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("bucket %q is missing", bucketMeta)
		}
		if v := meta.Get(keyIncarnation); v != nil {
			text, err := openMeta(keyIncarnation, v)
			if err != nil {
				return err
			}
			if n, err = strconv.ParseUint(string(text), 10, 64); err != nil {
				return fmt.Errorf("key %s/%s holds %q, not a count", bucketMeta, keyIncarnation, text)
			}
		}
		n++
		return meta.Put(keyIncarnation, sealMeta(keyIncarnation, strconv.FormatUint(n, 10)))
	})
	return n, err
}

// Incarnation is the number of times the journal has been opened for
// writing, this open included: it only grows over the file's life, so a
// process can tell what it recorded from what processes before it did
// (cri.Epochs). 0 for a journal opened read-only.
func (j *Journal) Incarnation() uint64 { return j.incarnation }
