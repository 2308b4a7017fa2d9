package journal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// Journal is actorlet's durable journal of pod events: one bbolt file,
// written by one goroutine with group commit. All methods are safe for
// concurrent use. See the package documentation for what is durable when.
type Journal struct {
	path     string
	db       *bolt.DB
	log      *zap.Logger
	opts     Options
	readOnly bool
	// incarnation: see Incarnation.
	incarnation uint64
	quarantined *QuarantinedError

	// queue, writerDone and commits are nil for a read-only journal.
	queue      *queue
	writerDone chan struct{}
	// commits wakes Follow after each commit.
	commits *commitSignal

	// idx is the in-memory index of the log (see index); staging is the
	// writer's, for the batch it commits.
	idx     index
	staging staging

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	stats stats
}

// Open opens the journal in dir (the file dir/journal.db), creating dir
// (mode 0700) and the file (mode 0600) if needed, and starts its writer.
//
// If another process holds the file, Open waits up to Options.OpenTimeout and
// then fails with ErrLocked, naming the holder's PID when /proc/locks tells
// it. If the file is damaged (bbolt cannot open it, its pages fail bbolt's
// consistency check, it is shorter than its pages claim, or its meta bucket or
// schema version is missing), Open moves it aside to
// journal.db.corrupt-<UTC time>, logs an error, and opens a fresh empty
// journal: it then succeeds and j.Quarantined() reports what happened. A file
// written by a newer schema version is refused with ErrSchemaVersion and left
// untouched. A file of schema version 1 is migrated to the current layout in
// one transaction (see migrate.go); one whose records cannot all be moved
// faithfully is quarantined. Open then reads the header of every record once
// to build the in-memory index. ctx bounds the opening only, not the
// journal's lifetime.
func Open(ctx context.Context, dir string, opts Options) (*Journal, error) {
	opts = opts.withDefaults()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open journal in %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open journal: create directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	log := opts.Logger.With(zap.String("path", path))

	start := time.Now()
	db, q, idx, err := openWritable(ctx, path, opts, log)
	if err != nil {
		return nil, err
	}
	inc, err := bumpIncarnation(db)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open journal %s: count the open: %w", path, err)
	}
	j := &Journal{
		incarnation: inc,
		path:        path,
		db:          db,
		log:         log,
		opts:        opts,
		quarantined: q,
		queue:       newQueue(),
		writerDone:  make(chan struct{}),
		commits:     newCommitSignal(),
	}
	j.idx.podIndex = idx
	go j.runWriter()
	log.Info("journal opened", zap.Bool("quarantined", q != nil), zap.Bool("noSync", opts.NoSync),
		zap.Int("pods", len(idx.pods)), zap.Int("records", idx.records),
		zap.Int("unreadableRecords", len(idx.orphans)), zap.Duration("took", time.Since(start)))
	return j, nil
}

// OpenReadOnly opens the journal in dir for reading, for tools such as the
// `actorlet journal` commands. It never creates, repairs or moves the file:
// a missing file fails with ErrNotFound, a damaged one with ErrCorrupt, a
// newer schema or schema version 1 (which only Open migrates) with
// ErrSchemaVersion, and a file held by a running actorlet with ErrLocked
// (after Options.OpenTimeout). Writes return ErrReadOnly.
func OpenReadOnly(ctx context.Context, dir string, opts Options) (*Journal, error) {
	opts = opts.withDefaults()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open journal in %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	log := opts.Logger.With(zap.String("path", path))
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("open journal %s read-only: file does not exist: %w", path, ErrNotFound)
		}
		return nil, fmt.Errorf("open journal %s read-only: %w", path, err)
	}
	res, err := openChecked(ctx, path, opts, log, true)
	if err != nil {
		return nil, err
	}
	if res.corrupt != nil {
		return nil, fmt.Errorf("open journal %s read-only: %w: %w", path, ErrCorrupt, res.corrupt)
	}
	if res.empty {
		_ = res.db.Close()
		return nil, fmt.Errorf("open journal %s read-only: the file was never initialized: %w", path, ErrNotFound)
	}
	if res.schema != SchemaVersion {
		_ = res.db.Close()
		return nil, fmt.Errorf("open journal %s read-only: it has schema version %d, which actorlet migrates to version %d "+
			"the next time it opens the journal for writing (actorlet run): %w", path, res.schema, SchemaVersion, ErrSchemaVersion)
	}
	idx, corrupt, err := loadIndex(res.db, path, log)
	if err != nil || corrupt != nil {
		_ = res.db.Close()
		if corrupt != nil {
			err = fmt.Errorf("open journal %s read-only: %w: %w", path, ErrCorrupt, corrupt)
		}
		return nil, err
	}
	j := &Journal{path: path, db: res.db, log: log, opts: opts, readOnly: true}
	j.idx.podIndex = idx
	return j, nil
}

// Path is the journal file's path.
func (j *Journal) Path() string { return j.path }

// Quarantined returns what Open did with a damaged file it found, or nil if
// the file was sound. A non-nil result means the journal started empty.
func (j *Journal) Quarantined() *QuarantinedError { return j.quarantined }

// Close stops the writer and closes the file. Appends, snapshots and deletes
// queued before Close are committed first (each gets its outcome); calls made
// after Close fail with ErrClosed. Close waits for running reads. Calling
// Close again returns the first call's result.
func (j *Journal) Close() error {
	j.closeOnce.Do(func() {
		j.closed.Store(true)
		if j.queue != nil {
			j.queue.close()
			<-j.writerDone
		}
		j.commits.close()
		if err := j.db.Close(); err != nil {
			j.closeErr = fmt.Errorf("close journal %s: %w", j.path, err)
		}
	})
	return j.closeErr
}
