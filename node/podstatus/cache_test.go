package podstatus

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors"
)

func TestPodStatusKeepsNewestSeq(t *testing.T) {
	c, _, _ := newTestCache(t)
	c.PodStatus(upd(pod("ns", "a", corev1.PodRunning, "c"), 5))

	for _, tc := range []struct {
		name string
		seq  uint64
	}{{"older", 4}, {"same", 5}, {"zero", 0}} {
		c.PodStatus(upd(pod("ns", "a", corev1.PodFailed, "c"), tc.seq))
		got, ok := c.Get("uid-a")
		if !ok || got.Status.Phase != corev1.PodRunning {
			t.Fatalf("after %s seq %d: Get = %v, %v; want the seq 5 pod (Running)", tc.name, tc.seq, phaseOf(got), ok)
		}
	}

	c.PodStatus(upd(pod("ns", "a", corev1.PodSucceeded, "c"), 6))
	if got, ok := c.Get("uid-a"); !ok || got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("after seq 6: Get = %v, %v; want Succeeded", phaseOf(got), ok)
	}
}

func phaseOf(p *corev1.Pod) corev1.PodPhase {
	if p == nil {
		return "<nil>"
	}
	return p.Status.Phase
}

func TestRemovedForgetsTheUID(t *testing.T) {
	c, _, _ := newTestCache(t)
	c.PodStatus(upd(pod("ns", "a", corev1.PodRunning, "c"), 7))
	c.PodStatus(upd(pod("ns", "b", corev1.PodRunning, "c"), 1))

	// Removed applies whatever its Seq.
	c.PodStatus(removed("uid-a", 3))
	if p, ok := c.Get("uid-a"); ok {
		t.Fatalf("Get after Removed = %v, true; want false", p.Name)
	}
	if got := names(c.List()); fmt.Sprint(got) != "[ns/b]" {
		t.Fatalf("List after Removed = %v; want [ns/b]", got)
	}

	// The UID comes back (a restored static pod) with its sequence restarted.
	c.PodStatus(upd(pod("ns", "a", corev1.PodPending, "c"), 1))
	if p, ok := c.Get("uid-a"); !ok || p.Status.Phase != corev1.PodPending {
		t.Fatalf("Get after re-add = %v, %v; want Pending", phaseOf(p), ok)
	}

	// Removing an unknown UID is harmless.
	c.PodStatus(removed("uid-nope", 1))
	if got := len(c.List()); got != 2 {
		t.Fatalf("List has %d pods; want 2", got)
	}
}

func TestOrphansKeepSeqButAreNotListed(t *testing.T) {
	c, _, _ := newTestCache(t)
	c.PodStatus(actors.PodUpdate{UID: "uid-o", Seq: 4})
	if p, ok := c.Get("uid-o"); ok {
		t.Fatalf("Get(orphan) = %v, true; want false", p)
	}
	if got := c.List(); len(got) != 0 {
		t.Fatalf("List = %v; want no pods", names(got))
	}
	// The orphan's seq still orders updates for its UID.
	o := pod("ns", "o", corev1.PodRunning, "c")
	c.PodStatus(upd(o, 4))
	if _, ok := c.Get("uid-o"); ok {
		t.Fatal("an update with the orphan's seq was stored")
	}
	c.PodStatus(upd(o, 5))
	if _, ok := c.Get("uid-o"); !ok {
		t.Fatal("an update newer than the orphan's seq was dropped")
	}
}

// TestCacheHandsOutCopies: the Cache keeps a published pod as it is (its
// sender never mutates it, see actors.PodUpdate) and hands out only copies.
func TestCacheHandsOutCopies(t *testing.T) {
	c, _, _ := newTestCache(t)
	in := withContainers(pod("ns", "a", corev1.PodRunning, "c"), running("c"))
	c.PodStatus(upd(in, 1))
	got, _ := c.Get("uid-a")
	if got == in {
		t.Fatal("Get returned the stored pod itself")
	}

	got.Status.Phase = corev1.PodFailed
	listed := c.List()
	listed[0].Status.ContainerStatuses[0].Name = "changed"
	again, _ := c.Get("uid-a")
	if again.Status.Phase != corev1.PodRunning || again.Status.ContainerStatuses[0].Name != "c" {
		t.Fatalf("changing a returned pod changed the stored one: %v %q", again.Status.Phase, again.Status.ContainerStatuses[0].Name)
	}
}

func TestListIsSorted(t *testing.T) {
	c, _, _ := newTestCache(t)
	for i, nn := range [][2]string{{"kube-system", "b"}, {"default", "z"}, {"kube-system", "a"}, {"default", "a"}} {
		p := pod(nn[0], nn[1], corev1.PodPending, "c")
		p.UID = types.UID("uid-" + nn[0] + "-" + nn[1])
		c.PodStatus(upd(p, uint64(i)+1))
	}
	// Same namespace and name, another UID: ordered by UID.
	dup := pod("default", "a", corev1.PodPending, "c")
	dup.UID = "uid-0"
	c.PodStatus(upd(dup, 1))

	var got []string
	for _, p := range c.List() {
		got = append(got, p.Namespace+"/"+p.Name+"/"+string(p.UID))
	}
	want := "[default/a/uid-0 default/a/uid-default-a default/z/uid-default-z kube-system/a/uid-kube-system-a kube-system/b/uid-kube-system-b]"
	if fmt.Sprint(got) != want {
		t.Fatalf("List = %v\nwant   %v", got, want)
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// TestConcurrentPublishers publishes from many goroutines, as PodActors do,
// while reading; run with -race. The final state must be each UID's newest.
func TestConcurrentPublishers(t *testing.T) {
	c, _, _ := newTestCache(t)
	const pods, updates = 16, 50
	var wg sync.WaitGroup
	for i := range pods {
		wg.Go(func() {
			name := fmt.Sprintf("p%02d", i)
			for seq := uint64(1); seq <= updates; seq++ {
				p := pod("ns", name, corev1.PodRunning, "c")
				p.Status.Message = fmt.Sprint(seq)
				c.PodStatus(upd(p, seq))
				// A stale duplicate, as a restarted actor might send.
				c.PodStatus(upd(pod("ns", name, corev1.PodFailed, "c"), seq-1))
			}
		})
	}
	wg.Go(func() {
		for range updates {
			_ = c.List()
		}
	})
	wg.Wait()

	got := c.List()
	if len(got) != pods {
		t.Fatalf("List has %d pods; want %d", len(got), pods)
	}
	for _, p := range got {
		if p.Status.Phase != corev1.PodRunning || p.Status.Message != fmt.Sprint(updates) {
			t.Errorf("pod %s: phase %s message %q; want Running, %d", p.Name, p.Status.Phase, p.Status.Message, updates)
		}
	}
	if p, ok := c.Get("uid-p00"); !ok || p.Name != "p00" {
		t.Errorf("Get(uid-p00) = %v, %v", p, ok)
	}
}

// Find picks the pod List would list first for namespace/name (and UID,
// when given), and copies it.
func TestFind(t *testing.T) {
	c, _, _ := newTestCache(t)
	a := pod("default", "a", corev1.PodRunning, "c")
	a.UID = "uid-b"
	c.PodStatus(upd(a, 1))
	dup := pod("default", "a", corev1.PodPending, "c")
	dup.UID = "uid-a"
	c.PodStatus(upd(dup, 1))
	c.PodStatus(upd(pod("other", "a", corev1.PodRunning, "c"), 1))

	if p, ok := c.Find("default", "a", ""); !ok || p.UID != "uid-a" {
		t.Fatalf("Find without UID = %v, %v; want uid-a, the lowest", p, ok)
	}
	p, ok := c.Find("default", "a", "uid-b")
	if !ok || p.UID != "uid-b" || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("Find with UID = %v, %v", p, ok)
	}
	p.Status.Phase = corev1.PodFailed
	if again, _ := c.Find("default", "a", "uid-b"); again.Status.Phase != corev1.PodRunning {
		t.Fatal("Find handed out the cache's own pod")
	}
	if _, ok := c.Find("default", "missing", ""); ok {
		t.Fatal("Find found a pod that is not there")
	}
}

// EachUnfinished hands out the stored pods themselves, sorted, leaving out
// the finished ones and the orphans, and builds no status for them.
func TestEachUnfinishedHandsTheStoredPods(t *testing.T) {
	c, _, _ := newTestCache(t)
	b, a := pod("ns", "b", corev1.PodRunning, "c"), pod("ns", "a", corev1.PodPending, "c")
	c.PodStatus(upd(b, 1))
	c.PodStatus(upd(a, 1))
	c.PodStatus(upd(pod("ns", "done", corev1.PodSucceeded, "c"), 1))
	c.PodStatus(upd(pod("ns", "failed", corev1.PodFailed, "c"), 1))
	c.PodStatus(actors.PodUpdate{UID: "uid-o", Seq: 1})
	var got []*corev1.Pod
	c.EachUnfinished(func(p *corev1.Pod) { got = append(got, p) })
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("EachUnfinished gave %v; want the stored pods ns/a, ns/b themselves", names(got))
	}
	if allocs := testing.AllocsPerRun(10, func() { c.EachUnfinished(func(*corev1.Pod) {}) }); allocs > 2 {
		t.Errorf("EachUnfinished allocated %v times a pass over 2 pods; want no copies (at most the slice and the sort)", allocs)
	}
}
