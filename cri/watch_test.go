package cri

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// recorder is a sink that keeps every view it was given.
type recorder struct {
	mu    sync.Mutex
	views []*PodView
}

func (r *recorder) sink(v *PodView) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views = append(r.views, v)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.views)
}

func (r *recorder) get(i int) *PodView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.views[i]
}

// runWatcher starts w.Run and stops it (waiting for it to return) at the end of the test.
func runWatcher(t *testing.T, w *Watcher, sink func(*PodView)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, sink)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// container returns the container with id in v, or nil.
func container(v *PodView, id string) *Container {
	for i := range v.Containers {
		if v.Containers[i].ID == id {
			return &v.Containers[i]
		}
	}
	return nil
}

func TestWatcherRelistReportsOnlyChanges(t *testing.T) {
	f := newFakeRuntime() // serves no events: GetContainerEvents is Unimplemented
	ids := populate(f)
	c := dialFake(t, f, Options{})
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	w := NewWatcher(c, WatchOptions{RelistPeriod: time.Second, Clock: clk})
	var relists atomic.Int64
	w.afterRelist = func() { relists.Add(1) }
	if w.Mode() != "" {
		t.Fatalf("Mode before Run = %q", w.Mode())
	}
	rec := &recorder{}
	runWatcher(t, w, rec.sink)

	waitFor(t, "relist mode", func() bool { return w.Mode() == ModeRelist })
	if rec.len() != 2 {
		t.Fatalf("first listing reported %d views, want 2 (pod-a, pod-b)", rec.len())
	}
	seen := map[string]bool{rec.get(0).UID: true, rec.get(1).UID: true}
	if !seen["pod-a"] || !seen["pod-b"] {
		t.Fatalf("first listing reported %v", seen)
	}

	tick := func() {
		t.Helper()
		n := relists.Load()
		clk.Step(time.Second)
		waitFor(t, "a relist", func() bool { return relists.Load() > n })
	}

	tick()
	if rec.len() != 2 {
		t.Fatalf("a relist without changes reported %+v", rec.get(rec.len()-1))
	}

	f.exit(ids["a-app1"], 1, "Error")
	tick()
	if rec.len() != 3 {
		t.Fatalf("after an exit: %d views, want 3", rec.len())
	}
	if v, ct := rec.get(2), container(rec.get(2), ids["a-app1"]); v.UID != "pod-a" || ct == nil ||
		ct.State != ContainerExited || ct.ExitCode != 1 || ct.Reason != "Error" {
		t.Fatalf("view after exit = %+v", v)
	}

	f.removePod("pod-b")
	tick()
	if rec.len() != 4 {
		t.Fatalf("after pod-b vanished: %d views, want 4", rec.len())
	}
	if v := rec.get(3); v.UID != "pod-b" || !v.Empty() {
		t.Fatalf("vanished pod reported as %+v, want empty view of pod-b", v)
	}

	tick()
	tick()
	if rec.len() != 4 {
		t.Fatalf("relists without changes reported %+v", rec.get(rec.len()-1))
	}
	if w.Mode() != ModeRelist || f.count("GetContainerEvents") != 1 {
		t.Errorf("mode %q after %d subscriptions; want relist, 1", w.Mode(), f.count("GetContainerEvents"))
	}
}

func TestWatcherEventsReportAfterEvent(t *testing.T) {
	f := newFakeRuntime()
	f.events = true
	sb := f.addSandbox("pod-a", 0, true, "10.0.0.5", true)
	c := dialFake(t, f, Options{})
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0)) // never stepped: no relist but the first
	w := NewWatcher(c, WatchOptions{Clock: clk})
	var relists atomic.Int64
	w.afterRelist = func() { relists.Add(1) }
	rec := &recorder{}
	runWatcher(t, w, rec.sink)

	waitFor(t, "events mode", func() bool { return w.Mode() == ModeEvents && f.subscribers() == 1 })
	if rec.len() != 1 || rec.get(0).UID != "pod-a" || len(rec.get(0).Containers) != 0 || rec.get(0).Sandboxes[0].IP != "10.0.0.5" {
		t.Fatalf("first listing: %d views", rec.len())
	}

	// An event about another tenant's pod is ignored.
	xsb := f.addSandbox("pod-x", 0, true, "10.0.0.9", false)
	f.addContainer(xsb, "app", 0, stRunning)

	ct := f.addContainer(sb, "app", 0, stRunning)
	waitFor(t, "the created container", func() bool { return rec.len() >= 2 })
	if got := container(rec.get(1), ct); rec.get(1).UID != "pod-a" || got == nil || got.State != ContainerRunning {
		t.Fatalf("view after create event = %+v", rec.get(1))
	}

	f.exit(ct, 0, "Completed")
	waitFor(t, "the exited container", func() bool { return rec.len() >= 3 })
	if got := container(rec.get(2), ct); got == nil || got.State != ContainerExited || got.Reason != "Completed" {
		t.Fatalf("view after stop event = %+v", rec.get(2))
	}

	f.removePod("pod-a")
	waitFor(t, "the vanished pod", func() bool { return rec.len() >= 4 })
	if v := rec.get(3); v.UID != "pod-a" || !v.Empty() {
		t.Fatalf("vanished pod reported as %+v", v)
	}

	f.mu.Lock()
	podXLists := f.podLists["pod-x"]
	f.mu.Unlock()
	if podXLists != 0 || rec.len() != 4 {
		t.Errorf("unmanaged pod was listed %d times; %d views", podXLists, rec.len())
	}
	if relists.Load() != 1 {
		t.Errorf("%d full relists, want 1: the views must come from events", relists.Load())
	}

	// A change the runtime sends no event for is found by the safety relist.
	sb2 := f.addSandbox("pod-c", 0, true, "10.0.0.6", true)
	f.mu.Lock()
	f.sandboxes[sb2].State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY // no event for sandboxes
	f.mu.Unlock()
	clk.Step(29 * time.Second)
	n := relists.Load()
	clk.Step(time.Second)
	waitFor(t, "the safety relist", func() bool { return relists.Load() > n })
	if relists.Load() != 2 || rec.len() != 5 || rec.get(4).UID != "pod-c" || rec.get(4).Sandboxes[0].Ready {
		t.Fatalf("after the safety relist: %d relists, %d views", relists.Load(), rec.len())
	}
}

func TestWatcherFallsBackToRelistAndResubscribes(t *testing.T) {
	f := newFakeRuntime()
	f.events = true
	sb := f.addSandbox("pod-a", 0, true, "10.0.0.5", true)
	ct := f.addContainer(sb, "app", 0, stRunning)
	c := dialFake(t, f, Options{})
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	w := NewWatcher(c, WatchOptions{RelistPeriod: 100 * time.Millisecond, Clock: clk})
	var relists atomic.Int64
	w.afterRelist = func() { relists.Add(1) }
	rec := &recorder{}
	runWatcher(t, w, rec.sink)
	waitFor(t, "events mode", func() bool { return w.Mode() == ModeEvents && f.subscribers() == 1 })

	f.mu.Lock()
	close(f.breakStreams) // the open stream fails with Unavailable
	f.breakStreams = make(chan struct{})
	f.mu.Unlock()
	waitFor(t, "relist mode", func() bool { return w.Mode() == ModeRelist && f.subscribers() == 0 })

	// While the stream is down, a tick's relist finds the change; no re-subscription yet (backoff 1s).
	f.exit(ct, 1, "Error")
	n := relists.Load()
	clk.Step(100 * time.Millisecond)
	waitFor(t, "a relist", func() bool { return relists.Load() > n })
	if got := container(rec.get(rec.len()-1), ct); got == nil || got.State != ContainerExited {
		t.Fatalf("relist did not report the exit: %+v", rec.get(rec.len()-1))
	}
	if f.count("GetContainerEvents") != 1 {
		t.Fatalf("re-subscribed before the backoff: %d subscriptions", f.count("GetContainerEvents"))
	}

	clk.Step(time.Second)
	waitFor(t, "events mode again", func() bool { return w.Mode() == ModeEvents && f.subscribers() == 1 })
	before := rec.len()
	ct2 := f.addContainer(sb, "app", 1, stRunning)
	waitFor(t, "the new container", func() bool { return rec.len() > before })
	if container(rec.get(rec.len()-1), ct2) == nil {
		t.Fatalf("event after re-subscription not reported: %+v", rec.get(rec.len()-1))
	}
}

// TestWatcherResubscribesBeforeTheNextRelist: a broken stream is retried
// after its backoff, not at the next relist tick (an hour away here), as
// when containerd restarts under a node that relies on its events.
func TestWatcherResubscribesBeforeTheNextRelist(t *testing.T) {
	f := newFakeRuntime()
	f.events = true
	c := dialFake(t, f, Options{})
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	w := NewWatcher(c, WatchOptions{RelistPeriod: time.Hour, Clock: clk})
	runWatcher(t, w, (&recorder{}).sink)
	waitFor(t, "events mode", func() bool { return w.Mode() == ModeEvents && f.subscribers() == 1 })

	f.mu.Lock()
	close(f.breakStreams)
	f.breakStreams = make(chan struct{})
	f.mu.Unlock()
	waitFor(t, "relist mode", func() bool { return w.Mode() == ModeRelist && f.subscribers() == 0 })
	waitFor(t, "the retry timer", func() bool { return clk.HasWaiters() })
	clk.Step(time.Second) // the first backoff
	waitFor(t, "events mode again", func() bool { return w.Mode() == ModeEvents && f.subscribers() == 1 })
}

// TestWatcherSlowSinkDoesNotBlockRuntime checks that the stream is drained while the sink is
// stuck. The client uses gRPC's minimal flow-control windows (64 KiB), so the runtime could not
// send megabytes of events unless the Watcher kept reading them.
func TestWatcherSlowSinkDoesNotBlockRuntime(t *testing.T) {
	f := newFakeRuntime()
	f.events = true
	sb := f.addSandbox("pod-a", 0, true, "10.0.0.5", true)
	ct := f.addContainer(sb, "app", 0, stRunning)
	sock := serveFake(t, f)
	conn, err := grpc.NewClient("unix://"+sock,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)) // also disables BDP growth
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := NewFromConn(conn, nil, Options{})

	w := NewWatcher(c, WatchOptions{Clock: clocktesting.NewFakeClock(time.Unix(1000, 0))})
	rec := &recorder{}
	gate, entered := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	runWatcher(t, w, func(v *PodView) {
		rec.sink(v)
		if calls.Add(1) == 1 {
			close(entered)
			<-gate // stuck until the runtime has sent everything
		}
	})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	<-entered // the first listing's report, with the stream already open

	const n = 2000 // × ~1 KiB ≫ 64 KiB of window
	f.mu.Lock()
	f.containers[ct].status.State = runtimeapi.ContainerState_CONTAINER_EXITED
	f.containers[ct].status.ExitCode = 9
	f.containers[ct].status.Annotations = map[string]string{"pad": strings.Repeat("x", 1024)} // fills the window
	sentBefore := f.sent
	for range n {
		f.publishLocked(ct, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	f.mu.Unlock()
	waitFor(t, "the runtime to send every event", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.sent-sentBefore >= n
	})
	close(gate)
	waitFor(t, "the exit to be reported", func() bool {
		if rec.len() < 2 {
			return false
		}
		got := container(rec.get(rec.len()-1), ct)
		return got != nil && got.ExitCode == 9
	})
	f.mu.Lock()
	lists := f.podLists["pod-a"]
	f.mu.Unlock()
	if lists > 5 {
		t.Errorf("%d events led to %d ListPod calls; queued events of a pod should be coalesced", n, lists)
	}
	if rec.len() != 2 {
		t.Errorf("%d views reported, want 2", rec.len())
	}
}

func TestEventPodUID(t *testing.T) {
	managed := podLabels("u1", true)
	other := podLabels("u2", false)
	for _, tc := range []struct {
		name  string
		ev    *runtimeapi.ContainerEventResponse
		uid   string
		known bool
	}{
		{"sandbox labels", &runtimeapi.ContainerEventResponse{PodSandboxStatus: &runtimeapi.PodSandboxStatus{Labels: managed}}, "u1", true},
		{"container labels", &runtimeapi.ContainerEventResponse{ContainersStatuses: []*runtimeapi.ContainerStatus{{Labels: managed}}}, "u1", true},
		{"unmanaged", &runtimeapi.ContainerEventResponse{PodSandboxStatus: &runtimeapi.PodSandboxStatus{Labels: other},
			ContainersStatuses: []*runtimeapi.ContainerStatus{{Labels: other}}}, "", true},
		{"bare", &runtimeapi.ContainerEventResponse{ContainerId: "c1"}, "", false},
	} {
		uid, known := eventPodUID(tc.ev)
		if uid != tc.uid || known != tc.known {
			t.Errorf("%s: eventPodUID = %q, %v; want %q, %v", tc.name, uid, known, tc.uid, tc.known)
		}
	}
}

func TestPodViewEqual(t *testing.T) {
	mk := func() *PodView {
		return &PodView{UID: "u", Sandboxes: []Sandbox{{ID: "s", CreatedAt: time.Unix(1, 0)}},
			Containers: []Container{{ID: "c", State: ContainerRunning, StartedAt: time.Unix(2, 0)}}}
	}
	a, b := mk(), mk()
	b.Containers[0].StartedAt = time.Unix(2, 0).In(time.FixedZone("x", 3600)) // same instant
	if !a.Equal(b) {
		t.Error("equal views differ")
	}
	b.Containers[0].ExitCode = 1
	if a.Equal(b) {
		t.Error("exit code change not seen")
	}
	b = mk()
	b.Sandboxes[0].Ready = !b.Sandboxes[0].Ready
	if a.Equal(b) || a.Equal(nil) || !(*PodView)(nil).Equal(nil) {
		t.Error("readiness change or nil not seen")
	}
	if !strings.EqualFold(ContainerExited.String(), "exited") || ContainerState(42).String() != "unknown" {
		t.Error("ContainerState.String")
	}
}

// TestWatcherInitialViews: views the caller already has count as reported,
// and their unchanged objects need no status call.
func TestWatcherInitialViews(t *testing.T) {
	f := newFakeRuntime()
	ids := populate(f)
	c := dialFake(t, f, Options{})
	initial, err := c.ListPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	statusCalls := f.count("ContainerStatus") + f.count("PodSandboxStatus")
	f.exit(ids["a-app1"], 1, "Error")

	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	w := NewWatcher(c, WatchOptions{RelistPeriod: time.Second, Clock: clk, Initial: initial})
	var relists atomic.Int64
	w.afterRelist = func() { relists.Add(1) }
	rec := &recorder{}
	runWatcher(t, w, rec.sink)
	waitFor(t, "the first listing", func() bool { return relists.Load() > 0 })
	if rec.len() != 1 || rec.get(0).UID != "pod-a" {
		t.Fatalf("first listing reported %d views, want only pod-a (changed since Initial)", rec.len())
	}
	if got := f.count("ContainerStatus") + f.count("PodSandboxStatus") - statusCalls; got != 1 {
		t.Fatalf("first listing made %d status calls, want 1 (the exited container)", got)
	}
}

// TestWatcherSubscribedBeforeInitial: with an event stream opened before the
// caller's listing (Subscribe) and that listing as Initial, Run lists nothing
// at start; a change made after the listing (and before Run) comes from its
// event. A runtime without events is listed at once, as without.
func TestWatcherSubscribedBeforeInitial(t *testing.T) {
	t.Run("events", func(t *testing.T) {
		f := newFakeRuntime()
		f.events = true
		ids := populate(f)
		c := dialFake(t, f, Options{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		sub, err := Subscribe(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the subscription", func() bool { return f.subscribers() == 1 })
		initial, err := c.ListPods(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		lists := f.count("ListPodSandbox") + f.count("ListContainers")
		f.exit(ids["b-app"], 2, "Error")

		clk := clocktesting.NewFakeClock(time.Unix(1000, 0)) // never stepped
		w := NewWatcher(c, WatchOptions{Clock: clk, Initial: initial, Subscription: sub})
		var relists atomic.Int64
		w.afterRelist = func() { relists.Add(1) }
		rec := &recorder{}
		runWatcher(t, w, rec.sink)
		waitFor(t, "the exited container", func() bool { return rec.len() >= 1 })
		if v := rec.get(0); v.UID != "pod-b" || container(v, ids["b-app"]).State != ContainerExited {
			t.Fatalf("first view: %+v", v)
		}
		if relists.Load() != 0 || f.subscribers() != 1 {
			t.Fatalf("%d full relists and %d subscriptions, want none and the one made before", relists.Load(), f.subscribers())
		}
		f.mu.Lock()
		podLists := f.podLists["pod-b"]
		f.mu.Unlock()
		if got := f.count("ListPodSandbox") + f.count("ListContainers") - lists; got != 2 || podLists != 1 {
			t.Fatalf("%d List calls (%d of pod-b) after the caller's listing, want the event's ListPod of pod-b only", got, podLists)
		}
	})
	t.Run("no events", func(t *testing.T) {
		f := newFakeRuntime()
		ids := populate(f)
		c := dialFake(t, f, Options{})
		sub, err := Subscribe(t.Context(), c)
		if err != nil {
			t.Fatal(err) // the stream's error comes with its first Recv
		}
		initial, err := c.ListPods(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		f.exit(ids["b-app"], 2, "Error")
		clk := clocktesting.NewFakeClock(time.Unix(1000, 0)) // never stepped
		w := NewWatcher(c, WatchOptions{Clock: clk, Initial: initial, Subscription: sub})
		var relists atomic.Int64
		w.afterRelist = func() { relists.Add(1) }
		rec := &recorder{}
		runWatcher(t, w, rec.sink)
		waitFor(t, "the relist", func() bool { return relists.Load() > 0 && rec.len() >= 1 && w.Mode() == ModeRelist })
		if v := rec.get(0); v.UID != "pod-b" || container(v, ids["b-app"]).State != ContainerExited {
			t.Fatalf("first view: %+v", v)
		}
	})
}

// TestWatcherBurstIsOneListing: events about many pods at once (hundreds of pods starting)
// are answered by one full listing, not by one ListPod per pod, and every pod's change is
// still reported; events about a few pods by their ListPods.
func TestWatcherBurstIsOneListing(t *testing.T) {
	f := newFakeRuntime()
	const pods = 40
	var cts []string
	for i := range pods {
		sb := f.addSandbox(fmt.Sprintf("pod-%02d", i), 0, true, fmt.Sprintf("10.0.1.%d", i), true)
		cts = append(cts, f.addContainer(sb, "app", 0, stRunning))
	}
	c := dialFake(t, f, Options{})
	w := NewWatcher(c, WatchOptions{Clock: clocktesting.NewFakeClock(time.Unix(1000, 0))})
	rec := &recorder{}
	st := &watchState{sink: rec.sink, last: map[string]*PodView{}}
	ctx := context.Background()
	if !w.relist(ctx, st) || rec.len() != pods {
		t.Fatalf("first listing: %d views", rec.len())
	}
	burst := func(cts []string, code int32) []*runtimeapi.ContainerEventResponse {
		f.mu.Lock()
		defer f.mu.Unlock()
		var evs []*runtimeapi.ContainerEventResponse
		for _, ct := range cts {
			f.containers[ct].status.State = runtimeapi.ContainerState_CONTAINER_EXITED
			f.containers[ct].status.ExitCode = code
			evs = append(evs, &runtimeapi.ContainerEventResponse{
				ContainerId: ct, ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT,
				PodSandboxStatus: clone(f.sandboxes[f.containers[ct].sandboxID]),
			})
		}
		f.podLists, f.calls = map[string]int{}, map[string]int{}
		return evs
	}
	counts := func() (perPod, sandboxLists int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, n := range f.podLists {
			perPod += n
		}
		return perPod, f.calls["ListPodSandbox"]
	}
	reported := func(from int, cts []string, code int32) {
		t.Helper()
		for _, ct := range cts {
			found := false
			for i := from; i < rec.len(); i++ {
				if got := container(rec.get(i), ct); got != nil && got.State == ContainerExited && got.ExitCode == code {
					found = true
				}
			}
			if !found {
				t.Errorf("the exit of %s was not reported", ct)
			}
		}
	}

	from := rec.len()
	if !w.handleEvents(ctx, st, burst(cts, 3)) {
		t.Fatal("the burst asks for a relist")
	}
	if perPod, lists := counts(); perPod != 0 || lists != 1 {
		t.Errorf("a burst about %d pods led to %d ListPods and %d ListPodSandbox calls; want one full listing", pods, perPod, lists)
	}
	reported(from, cts, 3)

	// Two pods' containers restarted: a ListPod each.
	var restarted []string
	for _, ct := range cts[:2] {
		f.mu.Lock()
		sb := f.containers[ct].sandboxID
		f.mu.Unlock()
		restarted = append(restarted, f.addContainer(sb, "app", 1, runtimeapi.ContainerState_CONTAINER_EXITED))
	}
	from = rec.len()
	if !w.handleEvents(ctx, st, burst(restarted, 4)) {
		t.Fatal("two events ask for a relist")
	}
	if perPod, lists := counts(); perPod != 2 || lists != 2 {
		t.Errorf("events about 2 pods led to %d ListPods and %d ListPodSandbox calls; want one ListPod each", perPod, lists)
	}
	reported(from, restarted, 4)
}

func TestManyPods(t *testing.T) {
	for _, c := range []struct {
		n, known int
		want     bool
	}{{1, 1, false}, {16, 16, false}, {17, 17, true}, {17, 300, false}, {62, 1000, false}, {63, 1000, true}, {700, 10000, true}} {
		if got := manyPods(c.n, c.known); got != c.want {
			t.Errorf("manyPods(%d, %d) = %v, want %v", c.n, c.known, got, c.want)
		}
	}
}
