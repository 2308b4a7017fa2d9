package journal

import (
	"time"

	"go.uber.org/zap"
	"k8s.io/utils/clock"
)

// Defaults of Options.
const (
	DefaultOpenTimeout = time.Second
	DefaultMaxBatch    = 16384
)

// Options configure Open and OpenReadOnly. The zero value is usable.
type Options struct {
	// Logger receives open, quarantine and commit-failure messages.
	// Default: a no-op logger.
	Logger *zap.Logger
	// OpenTimeout is how long Open waits for the file lock held by another
	// process before it returns ErrLocked. <= 0 means DefaultOpenTimeout.
	OpenTimeout time.Duration
	// Clock stamps quarantine names, the file's creation time and records
	// whose time is unset. Default: the real clock.
	Clock clock.PassiveClock
	// NoSync skips fsync on commit. UNSAFE: an acknowledged Append can be lost
	// and the file can be corrupted by a power loss or kernel crash. For
	// benchmarks and tests only.
	NoSync bool
	// MaxBatch is the most envelopes one commit takes from the queue
	// (a single Append with more envelopes is committed alone).
	// <= 0 means DefaultMaxBatch.
	MaxBatch int

	// maxSize is bbolt's MaxSize, used by tests to make commits fail.
	maxSize int
	// beforeCommit, if set, runs in the writer goroutine before each write
	// transaction with the number of requests in it; tests use it to hold the
	// writer while requests queue up.
	beforeCommit func(requests int)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = DefaultOpenTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	return o
}
