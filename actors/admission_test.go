package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// maxPods admits at most n pods at a time.
type maxPods int

func (n maxPods) Admit(pod *corev1.Pod, admitted []*corev1.Pod) (string, string) {
	if len(admitted) >= int(n) {
		return "OutOfpods", fmt.Sprintf("%d of %d pods admitted", len(admitted), n)
	}
	return "", ""
}

func testPod(name string, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent, Env: env}}}}
}

func phaseOf(st *statusLog, uid string) (corev1.PodPhase, string) {
	u, ok := st.get(uid)
	if !ok || u.Status == nil {
		return "", ""
	}
	return u.Status.Phase, u.Status.Reason
}

// TestAdmissionHoldsAndReleases: pods are admitted in the order they
// arrive; one that does not fit is rejected with the Admitter's reason and
// never runs; a removed pod and a pod that has finished give their share
// back.
func TestAdmissionHoldsAndReleases(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st,
		Admission: maxPods(2), Logger: zaptest.NewLogger(t)}, j)
	send := func(pods ...*corev1.Pod) {
		system.Root.Send(sup, &SourceSnapshot{Source: "api", Pods: pods})
	}
	a, b, c := testPod("a"), testPod("b"), testPod("c")
	send(a, b, c)
	waitUntil(t, "a and b Running, c rejected", func() bool {
		pa, _ := phaseOf(st, "uid-a")
		pb, _ := phaseOf(st, "uid-b")
		pc, why := phaseOf(st, "uid-c")
		return pa == corev1.PodRunning && pb == corev1.PodRunning && pc == corev1.PodFailed && why == "OutOfpods"
	})
	if n := sandboxes(t, client, "uid-c"); n != 0 {
		t.Fatalf("the rejected pod got %d sandboxes", n)
	}
	// a leaves; once it is gone, d fits.
	send(b, c)
	waitUntil(t, "a removed", func() bool {
		u, ok := st.get("uid-a")
		return ok && u.Removed
	})
	d := testPod("d")
	send(b, c, d)
	waitUntil(t, "d Running after a left", func() bool {
		p, _ := phaseOf(st, "uid-d")
		return p == corev1.PodRunning
	})
	// The node is full (b, d): f is rejected.
	f := testPod("f")
	send(b, c, d, f)
	waitUntil(t, "f rejected while b and d hold the node", func() bool {
		p, why := phaseOf(st, "uid-f")
		return p == corev1.PodFailed && why == "OutOfpods"
	})
	// b leaves; g takes its place and finishes (Succeeded): a finished pod
	// holds nothing while it is still there, so e fits beside it.
	send(c, d)
	waitUntil(t, "b removed", func() bool {
		u, ok := st.get("uid-b")
		return ok && u.Removed
	})
	exits := testPod("g", corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "0s"})
	send(c, d, exits)
	waitUntil(t, "g Succeeded", func() bool {
		// No runtime watcher here: hand the Supervisor the runtime's view.
		if v, err := (CRILister{Client: client}).ListPodObserved(context.Background(), "uid-g"); err == nil {
			system.Root.Send(sup, v)
		}
		p, _ := phaseOf(st, "uid-g")
		return p == corev1.PodSucceeded
	})
	e := testPod("e")
	send(c, d, exits, e)
	waitUntil(t, "e Running beside the finished g", func() bool {
		p, _ := phaseOf(st, "uid-e")
		return p == corev1.PodRunning
	})
}

// TestPendingSourceKeepsJournaledPods: after a restart, a source that has
// not delivered yet (an API server away) does not take its journaled pods
// down; its first set does, for the pods it leaves out.
func TestPendingSourceKeepsJournaledPods(t *testing.T) {
	_, client := newSim(t)
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	deps := Deps{Journal: j, Runtime: client, Lister: CRILister{Client: client}, Status: st, Logger: zaptest.NewLogger(t)}
	system := actor.NewActorSystem()
	sup, err := system.Root.SpawnNamed(NewSupervisorProps(t.Context(), deps, j.load, &Recovery{}), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	kept, gone := testPod("kept"), testPod("gone")
	system.Root.Send(sup, &SourceSnapshot{Source: "api", Pods: []*corev1.Pod{kept, gone}})
	waitUntil(t, "both Running", func() bool {
		p1, _ := phaseOf(st, "uid-kept")
		p2, _ := phaseOf(st, "uid-gone")
		return p1 == corev1.PodRunning && p2 == corev1.PodRunning
	})
	system.Shutdown()

	// The restart: the journal's states and the runtime's views, the API
	// source pending.
	rec := &Recovery{States: map[string]*lifecycle.State{}, Views: map[string]*pb.RuntimeObserved{}, Pending: []string{"api"}}
	for _, uid := range []string{"uid-kept", "uid-gone"} {
		s, err := j.load(context.Background(), uid)
		if err != nil {
			t.Fatal(err)
		}
		rec.States[uid] = s
		v, err := CRILister{Client: client}.ListPodObserved(context.Background(), uid)
		if err != nil {
			t.Fatal(err)
		}
		rec.Views[uid] = v
	}
	st2 := &statusLog{last: map[string]PodUpdate{}}
	deps.Status = st2
	system2 := actor.NewActorSystem()
	t.Cleanup(system2.Shutdown)
	sup2, err := system2.Root.SpawnNamed(NewSupervisorProps(t.Context(), deps, j.load, rec), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := system2.Root.RequestFuture(sup2, &ActivePods{}, 10*time.Second).Result(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both recovered Running", func() bool {
		p1, _ := phaseOf(st2, "uid-kept")
		p2, _ := phaseOf(st2, "uid-gone")
		return p1 == corev1.PodRunning && p2 == corev1.PodRunning
	})
	for _, uid := range []string{"uid-kept", "uid-gone"} {
		if s, _ := j.load(context.Background(), uid); s.P.Terminating {
			t.Fatalf("%s is terminating before its source delivered", uid)
		}
	}
	system2.Root.Send(sup2, &SourceSnapshot{Source: "api", Pods: []*corev1.Pod{kept}})
	waitUntil(t, "gone removed, kept running", func() bool {
		u, ok := st2.get("uid-gone")
		p1, _ := phaseOf(st2, "uid-kept")
		return ok && u.Removed && p1 == corev1.PodRunning
	})
	if n := sandboxes(t, client, "uid-gone"); n != 0 {
		t.Fatalf("gone has %d sandboxes left", n)
	}
}

// sandboxes counts the runtime's sandboxes (any state) of a pod UID.
func sandboxes(t *testing.T, client *cri.Client, uid string) int {
	t.Helper()
	list, err := client.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": uid}})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// named rejects every pod with its own reason, and counts the pods asked.
type named struct {
	reason string
	asked  int
}

func (n *named) Admit(*corev1.Pod, []*corev1.Pod) (string, string) {
	n.asked++
	return n.reason, "rejected by " + n.reason
}

// Admitters: all must admit; the first rejection wins and the ones after it
// are not asked.
func TestAdmittersFirstRejectionWins(t *testing.T) {
	yes1, yes2, no1, no2 := &named{}, &named{}, &named{reason: "First"}, &named{reason: "Second"}
	as := Admitters{yes1, no1, yes2, no2}
	reason, message := as.Admit(testPod("a"), nil)
	if reason != "First" || message != "rejected by First" {
		t.Fatalf("Admit: %q %q, want the first rejection", reason, message)
	}
	if yes1.asked != 1 || no1.asked != 1 || yes2.asked != 0 || no2.asked != 0 {
		t.Fatalf("asked %d %d %d %d, want 1 1 0 0", yes1.asked, no1.asked, yes2.asked, no2.asked)
	}
	if reason, _ := (Admitters{yes1, yes2}).Admit(testPod("a"), nil); reason != "" {
		t.Fatalf("all admit, got rejection %q", reason)
	}
	if JoinAdmitters(nil) != nil || JoinAdmitters(nil, yes1) != Admitter(yes1) {
		t.Fatal("JoinAdmitters must leave nil admitters out")
	}
	if got, ok := JoinAdmitters(yes1, nil, no1).(Admitters); !ok || len(got) != 2 {
		t.Fatalf("JoinAdmitters(yes, nil, no) = %#v", got)
	}
}
