package apisource_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/actorlet/actorlet/node/apisource"
)

// TestSharedDispatchesByNode: two nodes' sources over one informer each
// get their own pods only, as whole sets; a pod bound to one node wakes
// that node's source alone; a second source for a node is refused.
func TestSharedDispatchesByNode(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	onA, onB := pod("a1", t0, nil), pod("b1", t0, nil)
	onA.Spec.NodeName, onB.Spec.NodeName = "node-a", "node-b"
	client := fake.NewClientset(onA, onB)
	shared, err := apisource.NewShared(client, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sets := map[string]chan []*corev1.Pod{}
	done := make(chan error, 2)
	for _, n := range []string{"node-a", "node-b"} {
		src, err := shared.Source(apisource.Options{NodeName: n, Settle: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c := make(chan []*corev1.Pod, 10)
		sets[n] = c
		go func() { done <- src.Run(ctx, func(pods []*corev1.Pod) { c <- pods }) }()
	}
	shared.Start(ctx)
	t.Cleanup(func() { cancel(); <-done; <-done; shared.Shutdown() })

	if got := names(next(t, sets["node-a"])); len(got) != 1 || got[0] != "a1" {
		t.Fatalf("node-a's first set %v", got)
	}
	if got := names(next(t, sets["node-b"])); len(got) != 1 || got[0] != "b1" {
		t.Fatalf("node-b's first set %v", got)
	}
	again, err := shared.Source(apisource.Options{NodeName: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Run(ctx, func([]*corev1.Pod) {}); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("a second source for node-a: %v", err)
	}

	b2 := pod("b2", t0.Add(time.Minute), nil)
	b2.Spec.NodeName = "node-b"
	if _, err := client.CoreV1().Pods("default").Create(ctx, b2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := names(next(t, sets["node-b"])); len(got) != 2 || got[1] != "b2" {
		t.Fatalf("node-b's second set %v", got)
	}
	select {
	case extra := <-sets["node-a"]:
		t.Fatalf("node-a got a set for node-b's pod: %v", names(extra))
	default:
	}
	// A status change is not news; a label is (the downward API reads it).
	st, err := client.CoreV1().Pods("default").Get(ctx, "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	labelled, err := client.CoreV1().Pods("default").Get(ctx, "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labelled.Labels = map[string]string{"tier": "web"}
	labelled.ResourceVersion = "9" // as the API server's every write (the fake keeps what it is given)
	if _, err := client.CoreV1().Pods("default").Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := next(t, sets["node-b"]); len(got) != 2 || got[0].Labels["tier"] != "web" {
		t.Fatalf("node-b's set after the label: %v %v", names(got), got[0].Labels)
	}
	if p, err := shared.Lister().Pods("default").Get("b2"); err != nil || p.Spec.NodeName != "node-b" {
		t.Fatalf("the shared lister's b2: %v %v", p, err)
	}
}
