package apisource_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/actorlet/actorlet/node/apisource"
)

func pod(name string, created time.Time, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
		ResourceVersion: "7", CreationTimestamp: metav1.NewTime(created), Annotations: annotations},
		Spec:   corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// TestSourceDeliversWholeSets: the first set comes once synced; sets hold
// the node's pods oldest first, without status or resourceVersion, marked
// config.source=api, mirror pods left out (reported to OnMirror); a change
// delivers a new whole set, in which an unchanged pod is the same copy; a
// second Run is refused.
func TestSourceDeliversWholeSets(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newer, older := pod("newer", t0.Add(time.Minute), nil), pod("older", t0, nil)
	mirror := pod("static-node-1", t0, map[string]string{apisource.AnnotationConfigMirror: "hash"})
	client := fake.NewClientset(newer, older, mirror)
	mirrors := make(chan string, 10)
	ctx := t.Context()
	src, sets := runSource(t, apisource.Options{Client: client, NodeName: "node-1", Settle: time.Millisecond,
		OnMirror: func(p *corev1.Pod) { mirrors <- p.Name }})

	first := next(t, sets)
	if len(first) != 2 || first[0].Name != "older" || first[1].Name != "newer" {
		t.Fatalf("first set %v, want older, newer", names(first))
	}
	for _, p := range first {
		if p.ResourceVersion != "" || p.Status.Phase != "" || p.Annotations[apisource.AnnotationConfigSource] != "api" {
			t.Fatalf("pod as delivered: %+v %+v", p.ObjectMeta, p.Status)
		}
	}
	if name := nextMirror(t, mirrors); name != "static-node-1" {
		t.Fatalf("OnMirror got %q", name)
	}
	if err := src.Run(ctx, func([]*corev1.Pod) {}); !errors.Is(err, apisource.ErrAlreadyRunning) {
		t.Fatalf("second Run: %v", err)
	}
	// A status change alone is not news to the node; a new pod is.
	st := older.DeepCopy()
	st.Status.Phase = corev1.PodFailed
	st.ResourceVersion = "8"
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod("third", t0.Add(2*time.Minute), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := next(t, sets)
	if len(second) != 3 || second[2].Name != "third" {
		t.Fatalf("second set %v", names(second))
	}
	if second[1] != first[1] {
		t.Errorf("pod newer did not change, yet was handed on as a new copy")
	}
	if second[0] != first[0] {
		t.Errorf("only pod older's status changed, yet it was handed on as a new copy")
	}
	select {
	case extra := <-sets:
		t.Fatalf("a set for a status change: %v", names(extra))
	default:
	}
	// A change of the metadata is news: the pod comes as a new copy.
	relabeled := newer.DeepCopy()
	relabeled.Labels = map[string]string{"tier": "web"}
	relabeled.ResourceVersion = "9" // as the API server's every write (the fake keeps what it is given)
	if _, err := client.CoreV1().Pods("default").Update(ctx, relabeled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	third := next(t, sets)
	if len(third) != 3 || third[1] == second[1] || third[1].Labels["tier"] != "web" {
		t.Fatalf("after pod newer's new label, the set holds %+v", third[1].ObjectMeta)
	}
	if third[0] != second[0] {
		t.Errorf("pod older did not change, yet was handed on as a new copy")
	}
}

// TestSourceLetsEarlierVersionsGo: once the cache holds a newer version of
// a pod whose desired part did not change (a status write, not news to
// the node), nothing of the Source's keeps the earlier version's object.
func TestSourceLetsEarlierVersionsGo(t *testing.T) {
	p := pod("p", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	client := fake.NewClientset(p)
	ctx := t.Context()
	src, sets := runSource(t, apisource.Options{Client: client, NodeName: "node-1", Settle: time.Millisecond})
	handed := next(t, sets)
	cached, err := src.Lister().Pods("default").Get("p")
	if err != nil {
		t.Fatal(err)
	}
	earlier := weak.Make(cached)
	cached = nil

	st := p.DeepCopy()
	st.Status.Phase, st.ResourceVersion = corev1.PodFailed, "8"
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		runtime.GC()
		return earlier.Value() == nil, nil
	})
	if err != nil {
		t.Fatalf("the earlier version of the pod is still held after the cache got version 8: %v", err)
	}
	runtime.KeepAlive(handed)
}

// TestSourceSeesAnnotationKeysChange: a pod whose annotation keys change
// (an empty value under a new key) is handed on as a new copy.
func TestSourceSeesAnnotationKeysChange(t *testing.T) {
	p := pod("p", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), map[string]string{"a": ""})
	client := fake.NewClientset(p)
	_, sets := runSource(t, apisource.Options{Client: client, NodeName: "node-1", Settle: time.Millisecond})
	first := next(t, sets)
	changed := p.DeepCopy()
	changed.Annotations, changed.ResourceVersion = map[string]string{"b": ""}, "9"
	if _, err := client.CoreV1().Pods("default").Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := next(t, sets)
	if second[0] == first[0] {
		t.Fatal("the pod's annotation keys changed, yet it was handed on as the same copy")
	}
	if _, ok := second[0].Annotations["b"]; !ok {
		t.Fatalf("the new copy's annotations: %v", second[0].Annotations)
	}
}

// runSource runs a Source made with opts until the test ends; its sets
// come on the channel returned.
func runSource(t *testing.T, opts apisource.Options) (*apisource.Source, chan []*corev1.Pod) {
	t.Helper()
	src, err := apisource.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	sets := make(chan []*corev1.Pod, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func(pods []*corev1.Pod) { sets <- pods }) }()
	t.Cleanup(func() { cancel(); <-done })
	return src, sets
}

func next(t *testing.T, sets chan []*corev1.Pod) []*corev1.Pod {
	t.Helper()
	select {
	case s := <-sets:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no set delivered")
		return nil
	}
}

func nextMirror(t *testing.T, c chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("OnMirror not called")
		return ""
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
