package probe

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// scripted is a Prober answering from a script, one result per call
// (the last one repeats).
type scripted struct {
	mu     sync.Mutex
	script []Result
	calls  int
}

func (s *scripted) Probe(context.Context, Target, corev1.ProbeHandler, time.Duration) (Result, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.calls, len(s.script)-1)
	s.calls++
	return s.script[i], fmt.Sprintf("probe %d", s.calls)
}

func (s *scripted) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// workerRig runs a Worker on a FakeClock and collects its reports.
type workerRig struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	prober  *scripted
	reports chan Report
	period  time.Duration
	done    chan struct{}
	cancel  context.CancelFunc
}

func startWorker(t *testing.T, kind Kind, p *corev1.Probe, script ...Result) *workerRig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rig := &workerRig{
		t: t, clk: clocktesting.NewFakeClock(time.Unix(1000, 0)), prober: &scripted{script: script},
		reports: make(chan Report, 100), period: seconds(p.PeriodSeconds, DefaultPeriod),
		done: make(chan struct{}), cancel: cancel,
	}
	w := &Worker{Kind: kind, Probe: p, Target: target("10.0.0.1"), Prober: rig.prober, Clock: rig.clk,
		Report: func(r Report) { rig.reports <- r }}
	go func() { defer close(rig.done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-rig.done })
	return rig
}

// idle waits until the worker waits for its next probe (or has ended).
// Then everything its earlier probes caused has happened.
func (r *workerRig) idle() {
	r.t.Helper()
	waitFor(r.t, "the worker to wait for its next probe", func() bool {
		select {
		case <-r.done:
			return true
		default:
			return r.clk.HasWaiters()
		}
	})
}

// tick lets one period pass and waits for its probe to be handled.
func (r *workerRig) tick() {
	r.t.Helper()
	r.idle()
	before := r.prober.n()
	r.clk.Step(r.period)
	waitFor(r.t, "the next probe", func() bool { return r.prober.n() > before })
	r.idle()
}

// reported returns the reports so far.
func (r *workerRig) reported() []string {
	var out []string
	for {
		select {
		case rep := <-r.reports:
			out = append(out, fmt.Sprintf("%v %v (%s)", rep.Kind, rep.Result, rep.Message))
		default:
			return out
		}
	}
}

func (r *workerRig) want(what string, want ...string) {
	r.t.Helper()
	got := r.reported()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Fatalf("%s: reports %q, want %q", what, got, want)
	}
}

func (r *workerRig) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func TestWorkerReadinessThresholds(t *testing.T) {
	S, F, U := Success, Failure, Unknown
	p := &corev1.Probe{PeriodSeconds: 5, SuccessThreshold: 2, FailureThreshold: 3}
	rig := startWorker(t, Readiness, p, S, S, S, F, F, U, F, S, F, F, F, F)
	rig.idle()
	rig.want("one success of two needed")
	rig.tick()
	rig.want("two successes", "Readiness Success (probe 2)")
	rig.tick()
	rig.tick()
	rig.tick()
	rig.tick() // Unknown: neither counts nor resets
	rig.want("S F F U")
	rig.tick()
	rig.want("third failure", "Readiness Failure (probe 7)")
	rig.tick() // a single success resets the failures but is below threshold
	rig.tick()
	rig.tick()
	rig.want("S F F")
	rig.tick()
	rig.want("failure again: no change, no report")
	if rig.ended() {
		t.Fatal("readiness worker ended")
	}
}

func TestWorkerFirstResultIsReported(t *testing.T) {
	rig := startWorker(t, Readiness, &corev1.Probe{FailureThreshold: 1}, Failure)
	rig.idle()
	rig.want("readiness starts as Failure but the first decision is reported", "Readiness Failure (probe 1)")

	rig = startWorker(t, Liveness, &corev1.Probe{}, Success)
	rig.idle()
	rig.want("liveness first success", "Liveness Success (probe 1)")
	rig.tick()
	rig.want("liveness success again")
}

func TestWorkerInitialDelayAndPeriod(t *testing.T) {
	rig := startWorker(t, Readiness, &corev1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 7}, Success)
	rig.idle()
	rig.clk.Step(29 * time.Second)
	rig.idle() // FakeClock fires due timers within Step: no probe can follow
	if n := rig.prober.n(); n != 0 {
		t.Fatalf("%d probes before initialDelaySeconds", n)
	}
	rig.clk.Step(time.Second)
	waitFor(t, "the first probe", func() bool { return rig.prober.n() == 1 })
	rig.idle()
	rig.clk.Step(6 * time.Second)
	rig.idle()
	if n := rig.prober.n(); n != 1 {
		t.Fatalf("%d probes 6s into a 7s period", n)
	}
	rig.clk.Step(time.Second)
	waitFor(t, "the second probe", func() bool { return rig.prober.n() == 2 })
	rig.want("period", "Readiness Success (probe 1)")
}

func TestWorkerLivenessFailureEnds(t *testing.T) {
	rig := startWorker(t, Liveness, &corev1.Probe{}, Failure)
	rig.idle()
	rig.tick()
	rig.want("two failures of three")
	rig.clk.Step(rig.period)
	waitFor(t, "the worker to end", rig.ended)
	rig.want("third failure", "Liveness Failure (probe 3)")
}

func TestWorkerStartupEndsOnSuccess(t *testing.T) {
	rig := startWorker(t, Startup, &corev1.Probe{FailureThreshold: 30}, Failure, Failure, Success)
	rig.idle()
	rig.tick()
	rig.want("failures below threshold")
	rig.clk.Step(rig.period)
	waitFor(t, "the worker to end", rig.ended)
	rig.want("startup passed", "Startup Success (probe 3)")
}

func TestWorkerStopsOnCancel(t *testing.T) {
	rig := startWorker(t, Readiness, &corev1.Probe{}, Success)
	rig.idle()
	rig.cancel()
	waitFor(t, "the worker to end", rig.ended)
}
