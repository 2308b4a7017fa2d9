package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// namespace holds the bench's Deployments and pods.
const namespace = "bench-fleet"

// errTimeout is a phase that did not reach its end in time.
var errTimeout = errors.New("phase timed out")

// side is one side's run on its control plane.
type side struct {
	name string
	cfg  *config
	cs   kubernetes.Interface
	rest *rest.Config
	w    *watch
	proc *nodeProc
	// results by phase name, in the order run
	results map[string]*measure
	order   []string
	// notes are printed under the table.
	notes []string
}

// note logs what the side observed and keeps it for the report.
func (s *side) note(format string, args ...any) {
	n := s.name + ": " + fmt.Sprintf(format, args...)
	log.Print(n)
	s.notes = append(s.notes, n)
}

// mark is where a phase started.
type mark struct {
	at       time.Time
	cpu      float64
	requests float64
}

func (s *side) begin(ctx context.Context) (mark, error) {
	m := mark{at: time.Now()}
	if s.proc != nil {
		if err := resetPeakRSS(s.proc.pid()); err != nil {
			log.Printf("%s: %v (the peak is the process's so far)", s.name, err)
		}
		u, err := readProcUsage("/proc", s.proc.pid())
		if err != nil {
			return m, err
		}
		m.cpu = u.CPUSeconds
	}
	n, err := apiRequests(ctx, s.rest)
	if err != nil {
		return m, err
	}
	m.requests = n
	s.w.take() // the phase's Lease statistics start now
	return m, nil
}

// end records phase from m on, with note if it did not finish.
func (s *side) end(ctx context.Context, phase string, m mark, note string) error {
	wall := time.Since(m.at)
	r := &measure{Wall: wall, Note: note, Leases: s.w.take()}
	if s.proc != nil {
		u, err := readProcUsage("/proc", s.proc.pid())
		if err != nil {
			return err
		}
		r.CPUSeconds, r.PeakRSS = u.CPUSeconds-m.cpu, u.HWMBytes
	}
	n, err := apiRequests(ctx, s.rest)
	if err != nil {
		return err
	}
	r.Requests = n - m.requests
	if r.Load, err = loadAverage("/proc"); err != nil {
		return err
	}
	s.results[phase] = r
	s.order = append(s.order, phase)
	log.Printf("%s: %s: %.1f s, %.1f CPU s, peak RSS %s, %s API requests, %d Leases > 40 s, longest Lease gap %.1f s, %d nodes NotReady, load %s %s",
		s.name, phase, wall.Seconds(), r.CPUSeconds, mebibytes(r.PeakRSS), thousands(int64(r.Requests)),
		r.Leases.Stale, r.Leases.LongestGap.Seconds(), r.Leases.NotReady, r.Load, note)
	return nil
}

// waitUntil polls cond on the informers' caches every 250 ms until it holds,
// the node process exits or timeout passes; progress says how far it got.
func (s *side) waitUntil(ctx context.Context, timeout time.Duration, cond func() bool, progress func() string) error {
	last := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if err := s.proc.exited(); err != nil {
			return false, err
		}
		if time.Since(last) > 15*time.Second {
			last = time.Now()
			log.Printf("%s: %s%s", s.name, progress(), s.sofar())
		}
		return cond(), nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("%w after %s: %s", errTimeout, timeout, progress())
	}
	return err
}

// sofar is the phase's Lease statistics so far and the node process's
// resident set now, for the progress lines: where in a phase the first
// Lease went stale, and at how many pods.
func (s *side) sofar() string {
	l := s.w.peek()
	text := fmt.Sprintf("; so far %d Leases > 40 s, longest gap %.1f s, %d nodes NotReady", l.Stale, l.LongestGap.Seconds(), l.NotReady)
	if s.proc != nil {
		if u, err := readProcUsage("/proc", s.proc.pid()); err == nil {
			text += ", RSS " + mebibytes(u.RSSBytes)
		}
	}
	return text
}

// phase runs one measured phase: begin, do, end. A timeout is recorded as
// a note on the measure and returned.
func (s *side) phase(ctx context.Context, name string, do func(context.Context) error) error {
	m, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: begin %s: %w", s.name, name, err)
	}
	err = do(ctx)
	note := ""
	if errors.Is(err, errTimeout) {
		note = "timed out"
	} else if err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, name, err)
	}
	if endErr := s.end(ctx, name, m, note); endErr != nil {
		return fmt.Errorf("%s: end %s: %w", s.name, name, endErr)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, name, err)
	}
	return nil
}

// nodesReady waits for n nodes Ready.
func (s *side) nodesReady(ctx context.Context, n int) error {
	return s.waitUntil(ctx, s.cfg.timeout, func() bool { return s.w.readyNodes() >= n },
		func() string { return fmt.Sprintf("%d of %d nodes Ready", s.w.readyNodes(), n) })
}

// podsUp creates the pods (as Deployments, or bound to the nodes with
// -placement direct) and waits until all of them are up. Direct creations
// run while it waits, so that the progress lines show the pods coming up
// and the Leases as they are created.
func (s *side) podsUp(ctx context.Context, ds ...int32Deployment) error {
	want := 0
	for _, d := range ds {
		want += int(d.n)
	}
	cond := func() bool { total, up := s.w.podCounts(); return total == want && up == want }
	progress := func() string {
		total, up := s.w.podCounts()
		return fmt.Sprintf("%d pods, %d of %d up", total, up, want)
	}
	if s.cfg.placement == placementDirect {
		nodes := s.w.readyNodeNames()
		return s.waitWhile(ctx, func(ctx context.Context) error {
			for _, d := range ds {
				if err := createBoundPods(ctx, s.cs, namespace, d.name, d.role, int(d.n), nodes, s.cfg.directLimiter(false)); err != nil {
					return err
				}
			}
			return nil
		}, cond, progress)
	}
	for _, d := range ds {
		if _, err := s.cs.AppsV1().Deployments(namespace).Create(ctx, deployment(d.name, d.role, d.n), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment %s: %w", d.name, err)
		}
	}
	return s.waitUntil(ctx, s.cfg.timeout, cond, progress)
}

// waitWhile runs work while it waits, as waitUntil, for cond. It returns
// work's error, if any, as soon as work returns it, else the wait's; work's
// context ends when waitWhile returns, and waitWhile returns after work.
func (s *side) waitWhile(ctx context.Context, work func(context.Context) error, cond func() bool, progress func() string) error {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- work(wctx) }()
	var workErr error
	workDone := false
	err := s.waitUntil(ctx, s.cfg.timeout, func() bool {
		if !workDone {
			select {
			case workErr = <-done:
				workDone = true
			default:
			}
		}
		return workErr != nil || cond()
	}, progress)
	cancel()
	if !workDone {
		workErr = <-done
		if errors.Is(workErr, context.Canceled) && ctx.Err() == nil {
			workErr = nil // ended by the wait's own end
		}
	}
	if workErr != nil {
		return workErr
	}
	return err
}

// int32Deployment is a Deployment to create: n pods of role.
type int32Deployment struct {
	name, role string
	n          int32
}

// hold keeps the steady state for d (the nodes renew their Leases, report
// their status, run their probes and restart their crashing containers).
func (s *side) hold(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return s.proc.exited()
	case <-ctx.Done():
		return ctx.Err()
	case <-s.proc.done:
		return s.proc.exited()
	}
}

// podsGone scales the Deployments to 0 and waits until no pod is left; if
// pods not yet being deleted remain after deleteFallback, it deletes those
// one by one. Then it deletes the Deployments. With -placement direct it
// deletes every pod one by one and waits until none is left.
func (s *side) podsGone(ctx context.Context) error {
	if s.cfg.placement == placementDirect {
		return s.waitWhile(ctx, func(ctx context.Context) error { s.deleteAllPods(ctx); return nil },
			func() bool { total, _ := s.w.podCounts(); return total == 0 },
			func() string { total, _ := s.w.podCounts(); return fmt.Sprintf("%d pods left", total) })
	}
	if err := scaleToZero(ctx, s.cs, namespace); err != nil {
		return err
	}
	start, fellBack := time.Now(), false
	err := s.waitUntil(ctx, s.cfg.timeout, func() bool {
		total, _ := s.w.podCounts()
		if total > 0 && !fellBack && time.Since(start) > s.cfg.deleteFallback {
			fellBack = true
			log.Printf("%s: %d pods left after %s: deleting those not being deleted one by one", s.name, total, s.cfg.deleteFallback)
			s.deleteAllPods(ctx)
		}
		return total == 0
	}, func() string { total, _ := s.w.podCounts(); return fmt.Sprintf("%d pods left", total) })
	if err != nil {
		return err
	}
	return deleteDeployments(ctx, s.cs, namespace)
}
