package probe

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Probe defaults, as the API server sets them.
const (
	DefaultPeriod           = 10 * time.Second
	DefaultSuccessThreshold = 1
	DefaultFailureThreshold = 3
)

// Worker repeats one probe of one container (one container ID) and reports
// changes of its thresholded result.
//
// Schedule: the first probe runs initialDelaySeconds after StartedAt, then
// one every periodSeconds (a probe that overruns skips the missed periods,
// like a ticker); each probe has timeoutSeconds.
//
// Thresholds: the result becomes Success after successThreshold
// consecutive successes, Failure after failureThreshold consecutive
// failures; Unknown probe results are thrown away. The result starts as
// Kind's initial result (readiness Failure, liveness Success, startup
// Unknown), which is not reported. Report is called when the thresholded
// result differs from the last reported one; the first thresholded result
// is always reported.
//
// Run returns when ctx ends; a startup worker also after reporting
// Success, and liveness and startup workers after reporting Failure (the
// container is going to be restarted; the kubelet keeps such a worker on
// hold until it sees a new container ID). Once Run sees ctx ended it
// reports nothing more; a report already under way may still complete.
//
// Set the fields before Run; a Worker runs once.
type Worker struct {
	Kind   Kind
	Probe  *corev1.Probe
	Target Target
	Prober Prober
	// Report receives result changes, from Run's goroutine. It must not
	// block.
	Report func(Report)
	// Clock schedules the probes. Default: the real clock.
	Clock clock.Clock
	// StartedAt is when the container started; initialDelaySeconds
	// counts from it. Zero: when Run is called.
	StartedAt time.Time
}

// Run probes until ctx ends or the worker is done (see Worker).
func (w *Worker) Run(ctx context.Context) {
	clk := w.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	p := w.Probe
	period := seconds(p.PeriodSeconds, DefaultPeriod)
	timeout := seconds(p.TimeoutSeconds, DefaultTimeout)
	successes := threshold(p.SuccessThreshold, DefaultSuccessThreshold)
	failures := threshold(p.FailureThreshold, DefaultFailureThreshold)

	start := w.StartedAt
	if start.IsZero() {
		start = clk.Now()
	}
	next := start.Add(time.Duration(p.InitialDelaySeconds) * time.Second)
	last, reported := w.Kind.initialResult(), false
	run, runOf := 0, Unknown
	for {
		if d := next.Sub(clk.Now()); d > 0 {
			t := clk.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
		if ctx.Err() != nil {
			return
		}
		res, msg := w.Prober.Probe(ctx, w.Target, p.ProbeHandler, timeout)
		if ctx.Err() != nil {
			return
		}
		for now := clk.Now(); !next.After(now); {
			next = next.Add(period)
		}
		if res == Unknown {
			continue
		}
		if res == runOf {
			run++
		} else {
			runOf, run = res, 1
		}
		if (res == Failure && run < failures) || (res == Success && run < successes) {
			continue
		}
		if !reported || res != last {
			last, reported = res, true
			w.Report(Report{Kind: w.Kind, Container: w.Target.name(), ContainerID: w.Target.ContainerID, Result: res, Message: msg})
		}
		if (w.Kind == Startup && res == Success) || (w.Kind != Readiness && res == Failure) {
			return
		}
	}
}

func seconds(s int32, def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(s) * time.Second
}

func threshold(n int32, def int) int {
	if n <= 0 {
		return def
	}
	return int(n)
}
