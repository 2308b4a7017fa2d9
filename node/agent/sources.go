package agent

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/staticpod"
)

// sourceForwarder hands the newest snapshot of each pod source to the
// Supervisor. Sources are level-triggered, so only the latest matters and a
// slow Supervisor never blocks a source.
type sourceForwarder struct {
	mu     sync.Mutex
	latest map[string]*actors.SourceSnapshot
	wake   chan struct{}
	log    *sourceLog
}

func newSourceForwarder(log *zap.Logger) *sourceForwarder {
	return &sourceForwarder{latest: map[string]*actors.SourceSnapshot{}, wake: make(chan struct{}, 1), log: newSourceLog(log)}
}

// PodSource is a source of desired pods besides the static directory (the
// API server's pods, see package apisource). Run calls sink with the
// source's whole set each time it changes, from one goroutine, until ctx is
// done.
//
// Start does not wait for a PodSource's first set: until it arrives, the
// pods the journal holds from that source (by Name) keep running as they
// are, and a pod its first set leaves out is taken down then.
type PodSource struct {
	Name string
	Run  func(ctx context.Context, sink func([]*corev1.Pod)) error
}

// start starts a source whose sets, the first one included, go to forward.
// A source that fails is logged through onErr.
func (f *sourceForwarder) start(ctx context.Context, wg *sync.WaitGroup, src PodSource, onErr func(error)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := src.Run(ctx, func(pods []*corev1.Pod) { f.put(&actors.SourceSnapshot{Source: src.Name, Pods: pods}) })
		if err != nil && ctx.Err() == nil {
			onErr(err)
		}
	}()
}

func (f *sourceForwarder) put(snap *actors.SourceSnapshot) {
	f.log.observe(snap)
	f.mu.Lock()
	f.latest[snap.Source] = snap
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run starts a source and returns its first snapshot; later ones are kept
// for forward.
func (f *sourceForwarder) run(ctx context.Context, wg *sync.WaitGroup, name string, run func(context.Context, func(staticpod.Snapshot)) error) (actors.SourceSnapshot, error) {
	first := make(chan actors.SourceSnapshot, 1)
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sent := false
		err := run(ctx, func(s staticpod.Snapshot) {
			snap := actors.SourceSnapshot{Source: name, Pods: s.Pods}
			if !sent {
				sent = true
				f.log.observe(&snap)
				first <- snap
				return
			}
			f.put(&snap)
		})
		errc <- err
	}()
	select {
	case s := <-first:
		return s, nil
	case err := <-errc:
		if err == nil {
			err = errors.New("source stopped before its first snapshot")
		}
		return actors.SourceSnapshot{}, err
	case <-ctx.Done():
		return actors.SourceSnapshot{}, ctx.Err()
	}
}

// forward sends the latest snapshots until ctx is done.
func (f *sourceForwarder) forward(ctx context.Context, send func(*actors.SourceSnapshot)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		f.mu.Lock()
		batch := f.latest
		f.latest = map[string]*actors.SourceSnapshot{}
		f.mu.Unlock()
		for _, s := range batch {
			send(s)
		}
	}
}
