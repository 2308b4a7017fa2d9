package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
)

// maxCheckProblems bounds how many of bbolt's consistency errors are kept.
const maxCheckProblems = 100

// openResult is a bbolt file that opened, and what the open-time check found.
type openResult struct {
	db *bolt.DB
	// empty: the file holds no bucket (new, or its creator died before the
	// first commit); it needs initLayout.
	empty bool
	// schema is the file's schema version (SchemaVersion or
	// schemaPodBuckets), 0 if empty.
	schema int
	// corrupt, if set, says why the file is damaged; db is then closed.
	corrupt error
}

// openWritable opens the file at path for writing: it quarantines a damaged
// file and starts a fresh one, initializes a new file, migrates a schema 1
// file, and builds the index.
func openWritable(ctx context.Context, path string, opts Options, log *zap.Logger) (*bolt.DB, *QuarantinedError, podIndex, error) {
	var q *QuarantinedError
	for {
		res, err := openChecked(ctx, path, opts, log, false)
		if err != nil {
			if q != nil {
				err = fmt.Errorf("open fresh journal after quarantine (%v): %w", q, err)
			}
			return nil, nil, podIndex{}, err
		}
		var idx podIndex
		if res.corrupt == nil {
			idx, res.corrupt, err = prepareWritable(res, path, opts, log)
			if err != nil || res.corrupt != nil {
				_ = res.db.Close()
			}
			if err != nil {
				return nil, nil, podIndex{}, err
			}
		}
		if res.corrupt != nil {
			if q != nil {
				return nil, nil, podIndex{}, fmt.Errorf("open fresh journal %s after quarantine: %w: %w", path, ErrCorrupt, res.corrupt)
			}
			if q, err = quarantine(path, res.corrupt, opts.Clock.Now(), log); err != nil {
				return nil, nil, podIndex{}, err
			}
			continue
		}
		if err := tightenMode(path, log); err != nil {
			_ = res.db.Close()
			return nil, nil, podIndex{}, err
		}
		return res.db, q, idx, nil
	}
}

// prepareWritable makes a sound, opened file ready for the writer
// (initialized, migrated) and builds its index. corrupt reports damage found
// on the way, for quarantine.
func prepareWritable(res openResult, path string, opts Options, log *zap.Logger) (idx podIndex, corrupt, err error) {
	switch {
	case res.empty:
		if err := res.db.Update(func(tx *bolt.Tx) error { return initLayout(tx, opts.Clock.Now()) }); err != nil {
			return podIndex{}, nil, fmt.Errorf("initialize journal %s: %w", path, err)
		}
		syncDir(filepath.Dir(path), log)
	case res.schema == schemaPodBuckets:
		err := guard(log, path, func() error { return migrateV1(res.db, path, opts.Clock.Now(), log) })
		if errors.Is(err, ErrCorrupt) {
			return podIndex{}, err, nil
		}
		if err != nil {
			return podIndex{}, nil, err
		}
		fallthrough
	case res.schema == schemaUnframed:
		err := guard(log, path, func() error { return migrateV2(res.db, path, opts.Clock.Now(), log) })
		if errors.Is(err, ErrCorrupt) {
			return podIndex{}, err, nil
		}
		if err != nil {
			return podIndex{}, nil, err
		}
	}
	return loadIndex(res.db, path, log)
}

// loadIndex builds the index of an opened file. corrupt reports a file
// that bbolt panicked on.
func loadIndex(db *bolt.DB, path string, log *zap.Logger) (idx podIndex, corrupt, err error) {
	err = guard(log, path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			idx = buildIndex(tx)
			return nil
		})
	})
	switch {
	case err == nil:
		return idx, nil, nil
	case errors.Is(err, ErrCorrupt):
		return podIndex{}, err, nil
	default:
		return podIndex{}, nil, fmt.Errorf("index journal %s: %w", path, err)
	}
}

// openChecked opens the bbolt file and runs the open-time check. An error is
// returned for conditions that must not lead to quarantine (lock held, I/O
// and permission errors, newer schema, ctx); damage is reported in
// openResult.corrupt.
func openChecked(ctx context.Context, path string, opts Options, log *zap.Logger, readOnly bool) (openResult, error) {
	db, err := openBolt(path, opts, log, readOnly)
	switch {
	case err == nil:
	case errors.Is(err, berrors.ErrTimeout):
		return openResult{}, lockedError(path, opts.OpenTimeout)
	case isCorruption(err):
		return openResult{corrupt: err}, nil
	default:
		return openResult{}, fmt.Errorf("open journal %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		_ = db.Close()
		return openResult{}, fmt.Errorf("open journal %s: %w", path, err)
	}
	res := openResult{db: db}
	res.empty, res.schema, res.corrupt, err = checkOpened(db, path, log)
	if err != nil || res.corrupt != nil {
		_ = db.Close()
		res.db = nil
	}
	return res, err
}

// openBolt opens the bbolt file, turning a panic or fault on a damaged file
// into a *CorruptError.
func openBolt(path string, opts Options, log *zap.Logger, readOnly bool) (*bolt.DB, error) {
	var (
		db   *bolt.DB
		file *os.File
	)
	bo := &bolt.Options{
		Timeout:      opts.OpenTimeout,
		ReadOnly:     readOnly,
		NoSync:       opts.NoSync,
		FreelistType: bolt.FreelistMapType,
		MaxSize:      opts.maxSize,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	}
	err := guard(log, path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, bo)
		return err
	})
	if err != nil && file != nil {
		// bbolt closes its file when Open returns an error, but not when it
		// panicked: close it here so that its lock is released. (Its
		// mapping, if any, stays until exit: there is no handle to unmap it.)
		_ = file.Close()
	}
	return db, err
}

// isCorruption tells the errors of bolt.Open that mean a damaged file from
// those of the environment (permissions, I/O, lock).
func isCorruption(err error) bool {
	return errors.Is(err, ErrCorrupt) ||
		errors.Is(err, berrors.ErrInvalid) ||
		errors.Is(err, berrors.ErrChecksum) ||
		errors.Is(err, berrors.ErrVersionMismatch) ||
		// bbolt has no sentinel for a file shorter than its two meta pages.
		strings.Contains(err.Error(), "file size too small")
}

// checkOpened is the open-time check: the file is at least as long as its
// high-water mark, bbolt's consistency check passes, and the layout and
// schema version are there. It does not decode records (building the index
// reads their headers; Verify decodes them).
func checkOpened(db *bolt.DB, path string, log *zap.Logger) (empty bool, schema int, corrupt error, err error) {
	corrupt = guard(log, path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			if fi.Size() < tx.Size() {
				return &CorruptError{Path: path, Problems: []Problem{{
					Detail: fmt.Sprintf("file is %d bytes but its pages need %d (truncated)", fi.Size(), tx.Size()),
				}}}
			}
			if problems := checkPages(tx); problems != nil {
				return &CorruptError{Path: path, Problems: problems}
			}
			if isEmptyFile(tx) {
				empty = true
				return nil
			}
			schema, err = readSchema(tx)
			if err != nil {
				return &CorruptError{Path: path, Problems: []Problem{{Detail: err.Error()}}}
			}
			if schema > SchemaVersion {
				return fmt.Errorf("journal %s has schema version %d; this actorlet knows versions up to %d: %w",
					path, schema, SchemaVersion, ErrSchemaVersion)
			}
			if schema == SchemaVersion {
				// The meta values are believed: their checksums must hold.
				if problems := checkMeta(tx); problems != nil {
					return &CorruptError{Path: path, Problems: problems}
				}
			}
			for _, name := range requiredBuckets(schema) {
				if tx.Bucket(name) == nil {
					return &CorruptError{Path: path, Problems: []Problem{{
						Detail: fmt.Sprintf("bucket %q of schema version %d is missing", name, schema)}}}
				}
			}
			return nil
		})
	})
	switch {
	case corrupt == nil:
		return empty, schema, nil, nil
	case errors.Is(corrupt, ErrCorrupt):
		return false, 0, corrupt, nil
	default:
		return false, 0, nil, corrupt
	}
}

// checkPages runs bbolt's page-level consistency check on tx.
//
// bbolt's Check walks the pages in a goroutine of its own, where a fault on
// the mapping (a damaged page number or value size pointing past the file)
// cannot be turned into a panic and kills the process. So the caller's
// goroutine first touches every page Check would (touchPages): it runs under
// guard, with SetPanicOnFault, and such damage becomes a *CorruptError there.
func checkPages(tx *bolt.Tx) []Problem {
	touchPages(tx)
	var problems []Problem
	n := 0
	for err := range tx.Check() {
		if n++; n <= maxCheckProblems {
			problems = append(problems, Problem{Detail: "bbolt check: " + err.Error()})
		}
	}
	if n > maxCheckProblems {
		problems = append(problems, Problem{Detail: fmt.Sprintf("bbolt check: %d more errors", n-maxCheckProblems)})
	}
	return problems
}

// lockedError builds the ErrLocked error, naming the lock holder if known.
func lockedError(path string, waited time.Duration) error {
	holder := ""
	if pid, ok := lockHolder(path); ok {
		holder = fmt.Sprintf(" (pid %d)", pid)
		if pid == os.Getpid() {
			holder = fmt.Sprintf(" (pid %d: this process has it open already)", pid)
		}
	}
	return fmt.Errorf("journal %s is locked by another actorlet process%s; gave up after %s: %w",
		path, holder, waited, ErrLocked)
}

// tightenMode makes an existing journal file private (0600) if it is not.
func tightenMode(path string, log *zap.Logger) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat journal %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("journal file was readable by others; setting mode 0600", zap.Stringer("mode", fi.Mode()))
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("chmod journal %s: %w", path, err)
		}
	}
	return nil
}

// syncDir makes renames and file creations in dir durable.
func syncDir(dir string, log *zap.Logger) {
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		_ = d.Close()
	}
	if err != nil {
		log.Warn("fsync of journal directory failed", zap.String("dir", dir), zap.Error(err))
	}
}

// touchSink keeps touchPages' reads from being optimized away.
var touchSink atomic.Uint32

// touchPages reads every branch, leaf and overflow page of every bucket of
// tx (each key and the first and last byte of each value), in the caller's
// goroutine; it panics (under guard) on a damaged page.
func touchPages(tx *bolt.Tx) {
	var sink byte
	var walk func(b *bolt.Bucket)
	walk = func(b *bolt.Bucket) {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) > 0 {
				sink ^= k[len(k)-1]
			}
			switch {
			case v == nil:
				if nb := b.Bucket(k); nb != nil {
					walk(nb)
				}
			case len(v) > 0:
				sink ^= v[0] ^ v[len(v)-1]
			}
		}
	}
	_ = tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		walk(b)
		return nil
	})
	touchSink.Store(uint32(sink))
}
