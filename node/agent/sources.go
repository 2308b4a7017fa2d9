package agent

import (
	"context"
	"errors"
	"sync"

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
}

func newSourceForwarder() *sourceForwarder {
	return &sourceForwarder{latest: map[string]*actors.SourceSnapshot{}, wake: make(chan struct{}, 1)}
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
				first <- snap
				return
			}
			f.mu.Lock()
			f.latest[name] = &snap
			f.mu.Unlock()
			select {
			case f.wake <- struct{}{}:
			default:
			}
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
