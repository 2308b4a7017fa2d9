package agent

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors"
)

func TestSourceLogAddsUpdatesRemoves(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := newSourceLog(zap.New(core))
	pod := func(name, image, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
	}
	l.observe(&actors.SourceSnapshot{Source: "api", Pods: []*corev1.Pod{pod("a", "i:1", "1"), pod("b", "i:1", "1")}})
	// a: only its resourceVersion (a status write): not logged; b: new image.
	l.observe(&actors.SourceSnapshot{Source: "api", Pods: []*corev1.Pod{pod("a", "i:1", "2"), pod("b", "i:2", "2")}})
	l.observe(&actors.SourceSnapshot{Source: "api", Pods: []*corev1.Pod{pod("b", "i:2", "2")}})
	var got []string
	for _, e := range logs.AllUntimed() {
		f := e.ContextMap()
		got = append(got, e.Message+" "+f["pod"].(string)+" "+f["podUID"].(string)+" "+f["source"].(string))
	}
	want := []string{"pod added ns/a uid-a api", "pod added ns/b uid-b api", "pod updated ns/b uid-b api", "pod removed ns/a uid-a api"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
