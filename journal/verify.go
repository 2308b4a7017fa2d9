package journal

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// Verify checks the whole journal: bbolt's page-level consistency check, the
// file length, the meta bucket and schema version, and every record: each
// log key is a record number, greater than the one before; each record
// decodes, has a known schema version, and continues its pod's stream (the
// pod's snapshot, or seq 1) without gaps or repeats; no record is covered by
// its pod's snapshot; each snapshot decodes and names its pod. It also
// checks that the in-memory index matches the file. It returns nil or a
// *CorruptError (ErrCorrupt) listing the problems.
//
// On a writable journal Verify runs in the writer goroutine, inside a write
// transaction that it rolls back (bbolt's check is not safe in a read
// transaction while another transaction writes): appends wait while it runs.
// It honours ctx as Append does.
func (j *Journal) Verify(ctx context.Context) error {
	if j.readOnly {
		err := j.view(func(tx *bolt.Tx) error { return j.verifyTx(ctx, tx) })
		if err != nil {
			return fmt.Errorf("verify journal %s: %w", j.path, err)
		}
		return nil
	}
	r := newRequest(kindVerify, "")
	r.ctx = ctx
	if err := j.submit(ctx, r); err != nil {
		return fmt.Errorf("verify journal %s: %w", j.path, err)
	}
	return nil
}

// verifyInWriter runs verifyTx in a write transaction that is rolled back.
func (j *Journal) verifyInWriter(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			j.log.Error("bbolt panicked verifying the journal",
				zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			err = &CorruptError{Path: j.path, Problems: []Problem{{Detail: fmt.Sprintf("bbolt panicked: %v", r)}}}
		}
	}()
	tx, err := j.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return j.verifyTx(ctx, tx)
}

// verifyTx is Verify's check, in any transaction.
func (j *Journal) verifyTx(ctx context.Context, tx *bolt.Tx) error {
	var problems []Problem
	fail := func(format string, args ...any) error {
		problems = append(problems, Problem{Detail: fmt.Sprintf(format, args...)})
		return &CorruptError{Path: j.path, Problems: problems}
	}

	if fi, err := os.Stat(j.path); err != nil {
		return err
	} else if fi.Size() < tx.Size() {
		problems = append(problems, Problem{Detail: fmt.Sprintf("file is %d bytes but its pages need %d (truncated)", fi.Size(), tx.Size())})
	}
	problems = append(problems, checkPages(tx)...)
	if err := ctx.Err(); err != nil {
		return err
	}

	if schema, err := readSchema(tx); err != nil {
		problems = append(problems, Problem{Detail: err.Error()})
	} else if schema != SchemaVersion {
		problems = append(problems, Problem{Detail: fmt.Sprintf("schema version %d, want %d", schema, SchemaVersion)})
	}
	if tx.Bucket(bucketMeta) != nil {
		problems = append(problems, checkMeta(tx)...)
	}
	for _, name := range requiredBuckets(SchemaVersion) {
		if tx.Bucket(name) == nil {
			return fail("bucket %q is missing", name)
		}
	}

	builders, fileProblems, err := scanStreams(ctx, tx, false)
	if err != nil {
		return err
	}
	problems = append(problems, fileProblems...)
	for _, b := range builders {
		_, p := b.result()
		problems = append(problems, p...)
	}
	// The writer is the only one that changes the index, and Verify runs in
	// it (or the journal is read-only): no lock needed.
	fresh := buildIndex(tx)
	if d := j.idx.diff(&fresh); d != "" {
		problems = append(problems, Problem{Detail: "the in-memory index does not match the file: " + d})
	}
	if problems != nil {
		sortProblems(problems)
		return &CorruptError{Path: j.path, Problems: problems}
	}
	return nil
}
