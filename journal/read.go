package journal

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// ctxCheckEvery is how many pods LoadAll and Verify read between two looks
// at their context.
const ctxCheckEvery = 256

// Load returns the pod's snapshot and the events after it. It fails with
// ErrNotFound if nothing is stored for the pod and with a *CorruptError
// (ErrCorrupt) if a record of the pod is damaged, out of order or missing.
// Load reads committed data only: it sees every Append that has returned.
func (j *Journal) Load(ctx context.Context, podUID string) (*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load pod %q: %w", podUID, err)
	}
	var s *Stream
	err := j.view(func(tx *bolt.Tx) error {
		events := tx.Bucket(bucketPods).Bucket([]byte(podUID))
		snap := tx.Bucket(bucketSnapshots).Get([]byte(podUID))
		if events == nil && snap == nil {
			return ErrNotFound
		}
		var problems []Problem
		s, problems = readStream(podUID, events, snap)
		if problems != nil {
			return &CorruptError{Path: j.path, Problems: problems}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load pod %q: %w", podUID, err)
	}
	return s, nil
}

// Pods returns the sorted UIDs of the pods that have events or a snapshot.
func (j *Journal) Pods(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list pods of journal %s: %w", j.path, err)
	}
	var uids []string
	err := j.view(func(tx *bolt.Tx) error {
		uids = mergeSortedKeys(tx.Bucket(bucketPods), tx.Bucket(bucketSnapshots))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list pods of journal %s: %w", j.path, err)
	}
	return uids, nil
}

// mergeSortedKeys returns the union of the keys of a and b, sorted (bbolt
// keeps keys sorted bytewise, which for strings is Go's string order).
func mergeSortedKeys(a, b *bolt.Bucket) []string {
	var out []string
	ca, cb := a.Cursor(), b.Cursor()
	ka, _ := ca.First()
	kb, _ := cb.First()
	for ka != nil || kb != nil {
		switch c := compareKeys(ka, kb); {
		case c < 0:
			out = append(out, string(ka))
			ka, _ = ca.Next()
		case c > 0:
			out = append(out, string(kb))
			kb, _ = cb.Next()
		default:
			out = append(out, string(ka))
			ka, _ = ca.Next()
			kb, _ = cb.Next()
		}
	}
	return out
}

// compareKeys orders keys with nil (an exhausted cursor) last.
func compareKeys(a, b []byte) int {
	switch {
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return bytes.Compare(a, b)
}

// LoadAll returns the streams of all pods, read in one transaction: the
// recovery of a whole node. If some pods' records are damaged, LoadAll
// returns the streams of all other pods together with a *CorruptError
// (ErrCorrupt) whose PodUIDs names the damaged ones; the caller can recover
// the others and rebuild those from the pod sources and the runtime. On any
// other error the map is nil.
func (j *Journal) LoadAll(ctx context.Context) (map[string]*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load journal %s: %w", j.path, err)
	}
	var (
		out      map[string]*Stream
		problems []Problem
	)
	err := j.view(func(tx *bolt.Tx) error {
		pods, snaps := tx.Bucket(bucketPods), tx.Bucket(bucketSnapshots)
		out = make(map[string]*Stream)
		n := 0
		visit := func(uid []byte) error {
			if n++; n%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			s, p := readStream(string(uid), pods.Bucket(uid), snaps.Get(uid))
			if p != nil {
				problems = append(problems, p...)
				return nil
			}
			out[string(uid)] = s
			return nil
		}
		// Pods with events (and maybe a snapshot), then pods with only a
		// snapshot.
		c := pods.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v != nil {
				problems = append(problems, Problem{PodUID: string(k), Detail: "pods bucket holds a value, not a bucket, for this pod"})
				continue
			}
			if err := visit(k); err != nil {
				return err
			}
		}
		c = snaps.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if pods.Bucket(k) != nil {
				continue
			}
			if err := visit(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load journal %s: %w", j.path, err)
	}
	if problems != nil {
		return out, &CorruptError{Path: j.path, Problems: problems}
	}
	return out, nil
}
