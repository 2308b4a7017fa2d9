package podstatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSubscribeNotifiesChanges(t *testing.T) {
	c, _, _ := newTestCache(t)
	ch, unsubscribe := c.Subscribe()
	defer unsubscribe()
	if pending(ch) {
		t.Fatal("notification before any change")
	}

	c.PodStatus(upd(pod("ns", "a", corev1.PodPending, "c"), 1))
	if !pending(ch) {
		t.Fatal("no notification after a stored status")
	}

	// The state is visible by the time the notification arrives.
	c.PodStatus(upd(pod("ns", "a", corev1.PodRunning, "c"), 2))
	if !pending(ch) {
		t.Fatal("no notification after a newer status")
	}
	if p, _ := c.Get("uid-a"); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("after the notification Get says %v; want Running", p.Status.Phase)
	}

	c.PodStatus(upd(pod("ns", "a", corev1.PodFailed, "c"), 2))
	if pending(ch) {
		t.Fatal("notification after a dropped (stale) status")
	}

	c.PodStatus(removed("uid-nope", 1))
	if pending(ch) {
		t.Fatal("notification after removing an unknown UID")
	}

	c.PodStatus(removed("uid-a", 3))
	if !pending(ch) {
		t.Fatal("no notification after Removed")
	}
}

func TestSubscribeCoalescesAndUnsubscribes(t *testing.T) {
	c, _, _ := newTestCache(t)
	ch1, unsub1 := c.Subscribe()
	ch2, unsub2 := c.Subscribe()
	defer unsub2()

	for seq := uint64(1); seq <= 3; seq++ {
		c.PodStatus(upd(pod("ns", "a", corev1.PodPending, "c"), seq))
	}
	for i, ch := range []<-chan struct{}{ch1, ch2} {
		if !pending(ch) {
			t.Fatalf("subscriber %d: no notification", i+1)
		}
		if pending(ch) {
			t.Fatalf("subscriber %d: three changes gave more than one pending notification", i+1)
		}
	}

	unsub1()
	unsub1() // harmless
	c.PodStatus(upd(pod("ns", "a", corev1.PodPending, "c"), 4))
	if pending(ch1) {
		t.Fatal("notification after unsubscribing")
	}
	if !pending(ch2) {
		t.Fatal("the other subscriber lost its notification")
	}
}
