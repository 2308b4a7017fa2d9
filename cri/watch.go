package cri

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Watcher modes, as returned by Watcher.Mode.
const (
	ModeEvents = "events"
	ModeRelist = "relist"
)

const (
	// eventsBackoffMin and eventsBackoffMax bound the wait before re-subscribing to a broken
	// event stream. The backoff doubles on each break and resets once a stream delivered.
	eventsBackoffMin = time.Second
	eventsBackoffMax = time.Minute
	// unimplementedRetry is the wait before asking again a runtime that answered Unimplemented
	// (it may be upgraded and restarted under us).
	unimplementedRetry = 5 * time.Minute
)

// DefaultEventedRelistPeriod is WatchOptions.EventedRelistPeriod's default.
const DefaultEventedRelistPeriod = 30 * time.Second

// WatchOptions configures a Watcher.
type WatchOptions struct {
	// RelistPeriod is the interval of full relists when the runtime serves no events, and the
	// Watcher's tick (default 1s).
	RelistPeriod time.Duration
	// EventedRelistPeriod is the interval of safety relists while events work (default
	// DefaultEventedRelistPeriod).
	EventedRelistPeriod time.Duration
	// Clock drives ticks and backoff (default the real clock).
	Clock clock.WithTicker
	// Logger receives mode changes and failures (default the Client's logger).
	Logger *zap.Logger
	// Initial are views the caller already has, by pod UID (its start-up listing): they count
	// as already reported, so the first listing reports only what changed since, and asks no
	// status of objects they show in the same state.
	Initial map[string]*PodView
	// Subscription, when set, is the event stream Subscribe opened before the caller listed
	// the runtime for Initial: Run takes it over (and ends it when it returns), and with
	// Initial set makes no full listing at start. Run must be called only once with it.
	Subscription *Subscription
	// Relisted is called on Run's goroutine after each full relist, failed or not, with
	// when it started (Clock's time) and how long it took; nil: nobody. It must not block.
	Relisted func(started time.Time, took time.Duration)
	// Epochs number the listings (PodView.Epoch); nil: views are not numbered.
	Epochs *Epochs
}

// Watcher reports changes of actorlet's pods in the runtime as PodViews.
//
// It subscribes to GetContainerEvents; while the stream works ("events" mode) each event
// leads to a ListPod of the event's pod, plus a full ListPods every EventedRelistPeriod as a
// safety net. A runtime answering Unimplemented, or a broken stream, puts it in "relist" mode:
// a full ListPods every RelistPeriod. A broken stream is re-subscribed with backoff (1s
// doubling to 1m, reset once a stream delivered an event), an Unimplemented one every 5m.
//
// Guarantees of Run:
//   - sink is called from a single goroutine, one view at a time, only with a view that differs
//     (PodView.Equal) from the last one passed for that pod UID (or given in Initial). The first
//     listing reports every managed pod in the runtime that Initial does not show as it is
//     (with Initial and a Subscription made before it was listed there is none at start:
//     the events since tell what changed).
//   - A pod whose objects all disappeared is reported once with an empty view (only UID set).
//   - A failed listing reports nothing: a runtime outage never looks like pods disappearing.
//   - Events are read off the stream at once into an unbounded queue, so a slow sink never
//     stalls the runtime (containerd blocks its own event publishing on slow subscribers);
//     queued events of the same pod are coalesced into one ListPod.
//
// The sink must return quickly (hand the view to a mailbox or channel): while it runs no event
// is processed and no relist happens. It must not modify the view.
type Watcher struct {
	c     *Client
	opts  WatchOptions
	log   *zap.Logger
	mode  atomic.Value // string
	clock clock.WithTicker

	// afterRelist is a test hook called on Run's goroutine after each full relist; nil in
	// production.
	afterRelist func()
}

// Subscription is a runtime event stream opened before a Watcher runs (Subscribe).
type Subscription struct{ sub *subscription }

// Subscribe opens the runtime's event stream for a Watcher that is to run later
// (WatchOptions.Subscription), so that a listing the caller makes after it returned can be
// the Watcher's first: with Initial set to that listing, Run makes no full listing at start,
// and the events since Subscribe tell what changed after it. A runtime that serves no
// events, or a failed subscription, is an error; the Watcher then subscribes and lists as it
// would without. The stream ends with ctx (which should be Run's) or when Run returns.
func Subscribe(ctx context.Context, c *Client) (*Subscription, error) {
	sub, err := subscribe(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Subscription{sub: sub}, nil
}

// NewWatcher returns a Watcher on c. It starts nothing until Run.
func NewWatcher(c *Client, opts WatchOptions) *Watcher {
	if opts.RelistPeriod <= 0 {
		opts.RelistPeriod = time.Second
	}
	if opts.EventedRelistPeriod <= 0 {
		opts.EventedRelistPeriod = DefaultEventedRelistPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = c.log
	}
	w := &Watcher{c: c, opts: opts, log: opts.Logger, clock: opts.Clock}
	w.mode.Store("")
	return w
}

// Mode returns ModeEvents while an event stream is open, ModeRelist while the Watcher relists
// periodically, and "" before Run has started either.
func (w *Watcher) Mode() string { return w.mode.Load().(string) }

// setMode stores m, and logs a change. Run calls it on every turn of its
// loop (each node's watcher about once a second): the mode is compared
// first, since storing a string in the atomic.Value allocates.
func (w *Watcher) setMode(m string) {
	if w.mode.Load().(string) == m {
		return
	}
	if old := w.mode.Swap(m); old != m {
		w.log.Info("runtime watch mode", zap.String("mode", m), zap.String("previous", old.(string)))
	}
}

// watchState is Run's memory: the last view passed to the sink, per pod UID.
type watchState struct {
	sink    func(*PodView)
	last    map[string]*PodView
	lastErr Kind // kind of the last failed listing, OK after a success; logs transitions only
}

// Run watches until ctx is done, passing changed views to sink (see Watcher). It returns when
// ctx is done, after its goroutines have ended. Run must not be called twice at once.
func (w *Watcher) Run(ctx context.Context, sink func(*PodView)) {
	st := &watchState{sink: sink, last: map[string]*PodView{}}
	for uid, v := range w.opts.Initial {
		if v != nil && !v.Empty() {
			st.last[uid] = v
		}
	}
	ticker := w.clock.NewTicker(w.opts.RelistPeriod)
	defer ticker.Stop()

	var sub *subscription
	defer func() {
		if sub != nil {
			sub.stop()
		}
	}()
	retryAt := w.clock.Now() // subscribe at once
	backoff := eventsBackoffMin
	var lastFull time.Time
	needFull := true
	if w.opts.Subscription != nil {
		sub = w.opts.Subscription.sub
	}
	if sub != nil && w.opts.Initial != nil {
		// Subscribed before the caller's listing (Subscribe): that
		// listing is the first, and the events since tell the rest.
		needFull, lastFull = false, w.clock.Now()
	}
	for {
		now := w.clock.Now()
		if sub == nil && !now.Before(retryAt) {
			var err error
			if sub, err = w.subscribe(ctx); err != nil {
				retryAt = w.streamFailed(err, false, &backoff)
			} else {
				needFull = true // subscribed first, so listing now misses nothing
			}
		}
		mode := ModeRelist
		if sub != nil {
			mode = ModeEvents
		}
		if needFull || mode == ModeRelist || now.Sub(lastFull) >= w.opts.EventedRelistPeriod {
			if w.relist(ctx, st) {
				needFull = false
			}
			lastFull = now
			if w.afterRelist != nil {
				w.afterRelist()
			}
		}
		w.setMode(mode)

		var ready <-chan struct{}
		var retry clock.Timer // the next subscription attempt, when there is no stream
		var retryC <-chan time.Time
		if sub != nil {
			ready = sub.q.ready
		} else {
			retry = w.clock.NewTimer(retryAt.Sub(now))
			retryC = retry.C()
		}
		select {
		case <-ctx.Done():
			if retry != nil {
				retry.Stop()
			}
			return
		case <-ticker.C():
		case <-retryC: // subscribe again at the top of the loop
		case <-ready:
			events, streamErr := sub.q.drain()
			if len(events) > 0 {
				sub.delivered = true
				if !w.handleEvents(ctx, st, events) {
					needFull = true
				}
			}
			if streamErr != nil {
				if ctx.Err() != nil {
					return
				}
				sub.stop()
				retryAt = w.streamFailed(streamErr, sub.delivered, &backoff)
				sub = nil
				needFull = true
			}
		}
		if retry != nil {
			retry.Stop()
		}
	}
}

// streamFailed logs the end of an event stream (or a failed subscription) and returns when to
// subscribe again: after unimplementedRetry for a runtime without events, else after the
// backoff, which it then doubles (reset first if the stream had delivered events).
func (w *Watcher) streamFailed(err error, delivered bool, backoff *time.Duration) time.Time {
	now := w.clock.Now()
	if KindOf(err) == Unimplemented {
		w.log.Info("runtime serves no container events; relisting", zap.Error(err),
			zap.Duration("retry", unimplementedRetry))
		return now.Add(unimplementedRetry)
	}
	if delivered {
		*backoff = eventsBackoffMin
	}
	wait := *backoff
	*backoff = min(2*wait, eventsBackoffMax)
	if KindOf(err) == Canceled {
		// Our own doing (shutting down, the connection closed): no failure.
		w.log.Debug("runtime event stream closed", zap.Error(err))
		return now.Add(wait)
	}
	w.log.Warn("runtime event stream failed; relisting", zap.Error(err), zap.Duration("retry", wait))
	return now.Add(wait)
}

// relist lists all pods and reports the changed and vanished ones. It reports false when the
// listing failed.
func (w *Watcher) relist(ctx context.Context, st *watchState) bool {
	started := w.clock.Now()
	listedAt, epoch := started, w.opts.Epochs.Next()
	pods, err := w.c.listPods(ctx, "", newStatusCache(st.last))
	returned := w.opts.Epochs.Now()
	if w.opts.Relisted != nil {
		w.opts.Relisted(started, w.clock.Since(started))
	}
	if !w.listed(ctx, st, err) {
		return false
	}
	for uid, v := range pods {
		w.report(st, uid, v, listedAt, epoch, returned)
	}
	for uid := range st.last {
		if _, ok := pods[uid]; !ok {
			w.report(st, uid, nil, listedAt, epoch, returned)
		}
	}
	return true
}

// handleEvents reports the pods the events are about, one ListPod per pod, or, for a burst
// of events about many pods (manyPods), with one full listing. It returns false when a full
// relist is needed: an event it could not attribute or a failed listing.
func (w *Watcher) handleEvents(ctx context.Context, st *watchState, events []*runtimeapi.ContainerEventResponse) bool {
	ok := true
	var uids []string
	seen := map[string]bool{}
	for i, ev := range events {
		uid, known := eventPodUID(ev)
		switch {
		case !known:
			ok = false
		case uid != "" && !seen[uid]:
			seen[uid] = true
			uids = append(uids, uid)
		}
		events[i] = nil // only its pod is needed: let a backlog's messages go now
	}
	if manyPods(len(uids), len(st.last)) {
		return w.relist(ctx, st) && ok
	}
	for _, uid := range uids {
		var cache *statusCache
		if last := st.last[uid]; last != nil {
			cache = newStatusCache(map[string]*PodView{uid: last})
		}
		listedAt, epoch := w.clock.Now(), w.opts.Epochs.Next()
		pods, err := w.c.listPods(ctx, uid, cache)
		if !w.listed(ctx, st, err) {
			return false
		}
		w.report(st, uid, pods[uid], listedAt, epoch, w.opts.Epochs.Now())
	}
	return ok
}

// manyPods reports whether events about n pods, on a node whose runtime holds known pods,
// are better answered by one full listing (two List calls, statuses asked only of what
// changed) than by n ListPods (two calls each): a burst, as when hundreds of pods start at
// once, where one ListPod after another falls behind the events and their backlog grows.
func manyPods(n, known int) bool { return n > 16 && n*16 >= known }

// listed logs a listing failure when its kind changed since the last one, and a recovery.
func (w *Watcher) listed(ctx context.Context, st *watchState, err error) bool {
	k := KindOf(err)
	if k != st.lastErr && ctx.Err() == nil {
		if err != nil {
			w.log.Warn("cannot list runtime pods", zap.Error(err))
		} else {
			w.log.Info("listing runtime pods works again")
		}
	}
	if ctx.Err() == nil {
		st.lastErr = k
	}
	return err == nil
}

// report passes v to the sink if it differs from the last view of uid. v nil or empty means
// the pod has nothing in the runtime.
func (w *Watcher) report(st *watchState, uid string, v *PodView, listedAt time.Time, epoch, returned uint64) {
	last := st.last[uid]
	if v == nil || v.Empty() {
		if last == nil {
			return
		}
		delete(st.last, uid)
		st.sink(&PodView{UID: uid, ListedAt: listedAt, Epoch: epoch, Returned: returned})
		return
	}
	if last.Equal(v) {
		return
	}
	v.Epoch, v.Returned = epoch, returned // the view is the listing's own, not yet handed out
	st.last[uid] = v
	st.sink(v)
}

// eventPodUID returns the pod an event is about: from the sandbox status labels, else from the
// container statuses. known is false when the event names no labels at all (a runtime that
// sends bare events); uid is "" for events about objects actorlet does not manage.
func eventPodUID(ev *runtimeapi.ContainerEventResponse) (uid string, known bool) {
	if l := ev.GetPodSandboxStatus().GetLabels(); l != nil {
		if isManaged(l) {
			return l[LabelPodUID], true
		}
		known = true
	}
	for _, cs := range ev.GetContainersStatuses() {
		if l := cs.GetLabels(); l != nil {
			if isManaged(l) && l[LabelPodUID] != "" {
				return l[LabelPodUID], true
			}
			known = true
		}
	}
	return "", known
}

// subscription is an open event stream whose reader goroutine fills q.
type subscription struct {
	q         *eventQueue
	cancel    context.CancelFunc
	done      chan struct{}
	delivered bool // the stream delivered at least one event
}

func (w *Watcher) subscribe(ctx context.Context) (*subscription, error) { return subscribe(ctx, w.c) }

func subscribe(ctx context.Context, c *Client) (*subscription, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.GetContainerEvents(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	sub := &subscription{q: newEventQueue(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sub.done)
		for {
			ev, err := stream.Recv()
			if err != nil {
				sub.q.close(err)
				return
			}
			sub.q.push(ev)
		}
	}()
	return sub, nil
}

// stop ends the stream and waits for its reader.
func (s *subscription) stop() {
	s.cancel()
	<-s.done
}

// eventQueue is an unbounded FIFO between the stream reader and Run. ready holds a token
// whenever items or the final error are waiting.
type eventQueue struct {
	mu     sync.Mutex
	items  []*runtimeapi.ContainerEventResponse
	err    error
	closed bool
	ready  chan struct{}
}

func newEventQueue() *eventQueue { return &eventQueue{ready: make(chan struct{}, 1)} }

func (q *eventQueue) push(ev *runtimeapi.ContainerEventResponse) {
	q.mu.Lock()
	q.items = append(q.items, ev)
	q.mu.Unlock()
	q.signal()
}

func (q *eventQueue) close(err error) {
	q.mu.Lock()
	q.err, q.closed = err, true
	q.mu.Unlock()
	q.signal()
}

func (q *eventQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// drain takes every queued event, and the stream's final error once it ended.
func (q *eventQueue) drain() ([]*runtimeapi.ContainerEventResponse, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	if q.closed {
		return items, q.err
	}
	return items, nil
}
