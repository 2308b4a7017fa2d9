package probe

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestForActorsObservesEveryRun: a readiness probe failing from the start
// changes its thresholded result once (reported once, so journaled once),
// but every run is observed, as the kubelet's prober records an Unhealthy
// event for each failed run.
func TestForActorsObservesEveryRun(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	p := &corev1.Probe{ProbeHandler: execHandler("false"), PeriodSeconds: 10, FailureThreshold: 3}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", ReadinessProbe: p}}}}
	var (
		mu       sync.Mutex
		reports  []string
		observed []actors.Probed
	)
	prober := ForActors{Prober: &scripted{script: []Result{Failure}}, Clock: clk}.ForPod(pod,
		func(r *pb.ProbeResult) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, fmt.Sprintf("%s %s success=%v", r.Name, r.Kind, r.Success))
		},
		func(o actors.Probed) {
			mu.Lock()
			defer mu.Unlock()
			observed = append(observed, o)
		})
	defer prober.Stop()
	prober.Sync(context.Background(), "10.0.0.1", []lifecycle.ProbeTarget{{Name: "app", ContainerID: "c1", StartupDone: true, StartedAt: clk.Now()}})
	runs := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(observed)
	}
	for n := 1; n <= 5; n++ {
		waitFor(t, fmt.Sprintf("probe run %d", n), func() bool { return runs() >= n })
		waitFor(t, "the worker to wait for its next probe", clk.HasWaiters)
		clk.Step(10 * time.Second)
	}
	waitFor(t, "probe run 6", func() bool { return runs() >= 6 })
	mu.Lock()
	defer mu.Unlock()
	for i, o := range observed {
		want := actors.Probed{Container: "app", ContainerID: "c1", Kind: pb.ProbeKind_PROBE_READINESS, Outcome: actors.ProbeFailed,
			Message: fmt.Sprintf("probe %d", i+1)}
		if o != want {
			t.Errorf("run %d observed %+v, want %+v", i+1, o, want)
		}
	}
	if want := "[app PROBE_READINESS success=false]"; fmt.Sprint(reports) != want {
		t.Errorf("reports %v, want %s (only the thresholded change)", reports, want)
	}
}

// answer is a Prober with one answer, whose context may end during the
// probe.
type answer struct {
	res    Result
	msg    string
	cancel context.CancelFunc
}

func (a answer) Probe(context.Context, Target, corev1.ProbeHandler, time.Duration) (Result, string) {
	if a.cancel != nil {
		a.cancel()
	}
	return a.res, a.msg
}

// TestObservedOutcomes: the kubelet's outcomes of a run (a redirect to
// another host is its Warning; a probe that could not run errored); a run
// whose worker was stopped meanwhile is not observed.
func TestObservedOutcomes(t *testing.T) {
	tg := target("10.0.0.1")
	tg.Kind = Liveness
	for _, tc := range []struct {
		answer answer
		want   actors.ProbeOutcome
	}{
		{answer{res: Success, msg: "ok"}, actors.ProbeSucceeded},
		{answer{res: Success, msg: redirectWarning + ", Response body: moved"}, actors.ProbeWarned},
		{answer{res: Failure, msg: "HTTP probe failed with statuscode: 500"}, actors.ProbeFailed},
		{answer{res: Unknown, msg: "exec: container not found"}, actors.ProbeErrored},
	} {
		var got []actors.Probed
		o := observed{Prober: tc.answer, observe: func(p actors.Probed) { got = append(got, p) }}
		if res, msg := o.Probe(context.Background(), tg, execHandler("x"), time.Second); res != tc.answer.res || msg != tc.answer.msg {
			t.Errorf("%v: the probe's answer changed to %v %q", tc.answer, res, msg)
		}
		want := actors.Probed{Container: "app", ContainerID: "cid-1", Kind: pb.ProbeKind_PROBE_LIVENESS, Outcome: tc.want, Message: tc.answer.msg}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%v: observed %+v, want %+v", tc.answer, got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []actors.Probed
	o := observed{Prober: answer{res: Failure, msg: "gone", cancel: cancel}, observe: func(p actors.Probed) { got = append(got, p) }}
	o.Probe(ctx, tg, execHandler("x"), time.Second)
	if len(got) != 0 {
		t.Errorf("a run of a stopped worker was observed: %+v", got)
	}
}
