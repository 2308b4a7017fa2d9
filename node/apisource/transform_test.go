package apisource

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestSharedCacheDropsManagedFields: the shared informer's cache keeps
// pods without their managedFields.
func TestSharedCacheDropsManagedFields(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a1", Namespace: "default", UID: "uid-a1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: "node-a"}}
	shared, err := NewShared(fake.NewClientset(p), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	shared.Start(ctx)
	t.Cleanup(func() { cancel(); shared.Shutdown() })
	deadline := time.Now().Add(20 * time.Second)
	for !shared.informer.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("the shared informer did not sync")
		}
		time.Sleep(time.Millisecond) // polling interval
	}
	cached, err := shared.podLister.Pods("default").Get("a1")
	if err != nil {
		t.Fatal(err)
	}
	if cached.ManagedFields != nil {
		t.Errorf("the cache kept pod a1's managedFields: %v", cached.ManagedFields)
	}
}
