package staticpod

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Defaults of Options.
const (
	// DefaultResyncPeriod is the kubelet's fileCheckFrequency.
	DefaultResyncPeriod = 20 * time.Second
	// DefaultSettle is how long a burst of file events is gathered before the
	// directory is re-read.
	DefaultSettle = 100 * time.Millisecond
)

// ErrAlreadyRunning is returned by Run when another Run of the same Source
// has not returned yet.
var ErrAlreadyRunning = errors.New("staticpod: source is already running")

// Options configure a Source.
type Options struct {
	// Dir is the manifest directory (staticPodPath). As with the kubelet, it
	// may also name a single manifest file. Required.
	Dir string
	// NodeName is the node the pods are bound to. Required.
	NodeName string
	// ResyncPeriod is how often the directory is fully re-read besides the
	// fsnotify events. Zero means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Settle is how long after the first event of a burst the directory is
	// re-read, so that a file written in pieces is usually read whole. Zero
	// means DefaultSettle; negative means re-read at once.
	Settle time.Duration
	// Clock drives resyncs, settling and the config.seen times. Nil means
	// the real clock.
	Clock clock.WithTicker
	// Logger receives rejected manifests (once per distinct error) and
	// directory problems. Nil means no logging.
	Logger *zap.Logger
}

// Source delivers the static pods of one directory.
//
// Guarantees:
//   - Run calls sink from its own goroutine only, never concurrently, and
//     every call carries the whole set (level-triggered).
//   - The first call happens before Run starts waiting for changes; later
//     calls happen only when the pod UIDs or the rejections differ from the
//     last call.
//   - A pod's config.seen time is the first time its UID was read and stays
//     the same for as long as the UID stays in the set, so an unchanged file
//     yields an identical pod on every read.
//   - A transient failure to read the directory itself keeps the last set
//     (nothing is delivered) and is retried on the next event or resync.
type Source struct {
	dir      string
	nodeName string
	resync   time.Duration
	settle   time.Duration
	clock    clock.WithTicker
	log      *zap.Logger

	running atomic.Bool

	// Owned by the goroutine running Run.
	lastKey    []string // Snapshot.key of the last delivery
	delivered  bool
	seen       map[types.UID]time.Time
	logged     map[string]string // rejected file -> error last logged for it
	warned     map[string]string // file with ignored fields -> warning last logged
	skipped    map[string]string // skipped entry -> reason last logged
	missing    bool              // the directory was missing at the last read
	lastDirErr string            // the directory error last logged
}

// New returns a Source for opts. It has no side effects: nothing is read or
// watched before Run.
func New(opts Options) (*Source, error) {
	if opts.Dir == "" {
		return nil, errors.New("staticpod: Options.Dir is required")
	}
	if opts.NodeName == "" {
		return nil, ErrNoNodeName
	}
	s := &Source{
		dir:      filepath.Clean(opts.Dir),
		nodeName: opts.NodeName,
		resync:   opts.ResyncPeriod,
		settle:   opts.Settle,
		clock:    opts.Clock,
		log:      opts.Logger,
		seen:     map[types.UID]time.Time{},
		logged:   map[string]string{},
		warned:   map[string]string{},
		skipped:  map[string]string{},
	}
	if s.resync <= 0 {
		s.resync = DefaultResyncPeriod
	}
	if s.settle == 0 {
		s.settle = DefaultSettle
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.log = s.log.With(zap.String("staticPodPath", s.dir))
	return s, nil
}

// Run reads the directory, calls sink with the result and then watches the
// directory, calling sink again whenever the set changes, until ctx is done.
// It returns nil when ctx is done, and an error if the watcher cannot be set
// up, if the directory cannot be read the first time (a missing directory is
// not an error: it is an empty set), or if the watcher fails for good.
func (s *Source) Run(ctx context.Context, sink func(Snapshot)) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer s.running.Store(false)

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("static pod path %q: create watcher: %w", s.dir, err)
	}
	defer w.Close()

	s.delivered = false
	if err := s.refresh(w, sink); err != nil {
		return err
	}

	ticker := s.clock.NewTicker(s.resync)
	defer ticker.Stop()
	var settle clock.Timer
	var settleC <-chan time.Time
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("static pod path %q: watcher closed", s.dir)
			}
			if !s.relevant(ev) || settleC != nil {
				continue // irrelevant, or a re-read is already scheduled
			}
			if s.settle < 0 {
				_ = s.refresh(w, sink)
				continue
			}
			settle = s.clock.NewTimer(s.settle)
			settleC = settle.C()
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("static pod path %q: watcher closed", s.dir)
			}
			// Events may have been lost (e.g. queue overflow): re-read.
			s.log.Warn("static pod path watch error; re-reading", zap.Error(err))
			_ = s.refresh(w, sink)
		case <-settleC:
			settle, settleC = nil, nil
			_ = s.refresh(w, sink)
		case <-ticker.C():
			_ = s.refresh(w, sink)
		}
	}
}

// relevant filters out attribute-only changes and files that are never
// manifests.
func (s *Source) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	if filepath.Clean(ev.Name) == s.dir {
		return true
	}
	return !skipName(filepath.Base(ev.Name))
}

// refresh makes sure the path is watched, reads it and delivers the result if
// it differs from the last delivery (or nothing was delivered yet). It
// returns the error of an unreadable directory, after logging it.
func (s *Source) refresh(w *fsnotify.Watcher, sink func(Snapshot)) error {
	// Watch before reading, so a change right after the read is not missed.
	s.ensureWatch(w)
	snap, missing, err := readPath(s.dir, s.nodeName)
	if err != nil {
		if msg := err.Error(); msg != s.lastDirErr {
			s.log.Error("cannot read static pod path; keeping the last set", zap.Error(err))
			s.lastDirErr = msg
		}
		return err
	}
	s.lastDirErr = ""
	if missing && !s.missing {
		s.log.Info("static pod path does not exist; no static pods until it does")
	}
	s.missing = missing

	s.stamp(snap)
	s.logRejections(snap)
	s.logWarnings(snap)
	key := snap.key()
	if s.delivered && slices.Equal(key, s.lastKey) {
		return nil
	}
	s.log.Debug("static pod set changed", zap.Int("pods", len(snap.Pods)), zap.Int("rejected", len(snap.Rejected)))
	s.lastKey = key
	s.delivered = true
	sink(snap)
	return nil
}

// ensureWatch adds the path to the watcher unless it is watched already or
// does not exist. fsnotify drops a watch whose directory was removed, so this
// also re-arms the watch on a re-created directory.
func (s *Source) ensureWatch(w *fsnotify.Watcher) {
	if slices.Contains(w.WatchList(), s.dir) {
		return
	}
	if err := w.Add(s.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("cannot watch static pod path; relying on periodic resync", zap.Error(err))
	}
}

// stamp sets each pod's config.seen to the first time its UID was read, and
// forgets UIDs no longer present.
func (s *Source) stamp(snap Snapshot) {
	now := s.clock.Now()
	present := make(map[types.UID]time.Time, len(snap.Pods))
	for _, p := range snap.Pods {
		at, ok := s.seen[p.UID]
		if !ok {
			at = now
		}
		present[p.UID] = at
		stampSeen(p, at)
	}
	s.seen = present
}

// logRejections logs each rejected file once per distinct error.
func (s *Source) logRejections(snap Snapshot) {
	current := make(map[string]string, len(snap.Rejected))
	for _, r := range snap.Rejected {
		msg := r.Err.Error()
		current[r.File] = msg
		if s.logged[r.File] != msg {
			s.log.Error("static pod manifest rejected", zap.String("file", r.File), zap.Error(r.Err))
		}
	}
	s.logged = current
}

// logWarnings logs, once per distinct message, the fields a manifest's pod
// was read without (warn), and the directory entries not read, with why
// (debug).
func (s *Source) logWarnings(snap Snapshot) {
	warned := make(map[string]string, len(snap.Warnings))
	for _, w := range snap.Warnings {
		warned[w.File] = w.Msg
		if s.warned[w.File] != w.Msg {
			s.log.Warn("static pod manifest has fields a Pod does not have; they are ignored",
				zap.String("file", w.File), zap.String("fields", w.Msg))
		}
	}
	s.warned = warned
	skipped := make(map[string]string, len(snap.Skipped))
	for _, k := range snap.Skipped {
		skipped[k.File] = k.Reason
		if s.skipped[k.File] != k.Reason {
			s.log.Debug("not a static pod manifest; skipped", zap.String("file", k.File), zap.String("reason", k.Reason))
		}
	}
	s.skipped = skipped
}
