package statuswriter

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/actorlet/actorlet/actors"
)

// TestWriterKeepsLittleOfTheWrittenObject: after a status write the Writer
// keeps the status, identity and readiness gates of the object the server
// returned, not its spec or managed fields; once the cache holds that
// version, the Writer keeps the cache's object instead.
func TestWriterKeepsLittleOfTheWrittenObject(t *testing.T) {
	onServer := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "3",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "img"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}},
	}
	client := fake.NewClientset(onServer)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := indexer.Add(onServer); err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Client: client, Pods: corelisters.NewPodLister(indexer), NodeName: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	accepted := onServer.DeepCopy()
	accepted.ManagedFields = nil
	accepted.Annotations = map[string]string{annotationSource: sourceAPI}
	w.PodStatus(actors.PodUpdate{UID: "uid-1", Pod: accepted, Status: &corev1.PodStatus{Phase: corev1.PodRunning}, Seq: 1})
	ctx := context.Background()
	if err := w.sync(ctx, "uid-1"); err != nil {
		t.Fatal(err)
	}
	server := w.pods["uid-1"].server
	switch {
	case server == nil || server.Status.Phase != corev1.PodRunning || server.UID != "uid-1" || server.ResourceVersion == "":
		t.Fatalf("the Writer kept %+v after the write", server)
	case len(server.Spec.Containers) != 0 || server.ManagedFields != nil:
		t.Errorf("the Writer kept the written object's spec or managed fields")
	case len(server.Spec.ReadinessGates) != 1:
		t.Errorf("the Writer dropped the readiness gates the next merge reads")
	}

	cached, err := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := indexer.Update(cached); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(ctx, "uid-1"); err != nil {
		t.Fatal(err)
	}
	if got := w.pods["uid-1"].server; got != cached {
		t.Errorf("the cache holds the written version, yet the Writer keeps its own copy")
	}
}
