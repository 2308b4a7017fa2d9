package apisource

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
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

// TestCacheTransformSharesUnchangedValues: a new version of a cached pod
// takes the cached version's spec, labels and owner references where they
// are equal, and keeps its own where they changed; a pod of another UID
// under the same name shares nothing.
func TestCacheTransformSharesUnchangedValues(t *testing.T) {
	cached := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a1", Namespace: "default", UID: "uid-a1", ResourceVersion: "1",
		Labels:          map[string]string{"app": "a"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "uid-rs"}}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}}}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(cached); err != nil {
		t.Fatal(err)
	}
	tr := &cacheTransform{store: store}
	transform := func(p *corev1.Pod) *corev1.Pod {
		t.Helper()
		out, err := tr.transform(p)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Pod)
	}
	sameMap := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}

	statusOnly := cached.DeepCopy()
	statusOnly.ResourceVersion, statusOnly.Status.Phase = "2", corev1.PodRunning
	got := transform(statusOnly)
	if &got.Spec.Containers[0] != &cached.Spec.Containers[0] || !sameMap(got.Labels, cached.Labels) || &got.OwnerReferences[0] != &cached.OwnerReferences[0] {
		t.Errorf("a status-only version does not share the cached spec, labels and owner references")
	}
	if got.Status.Phase != corev1.PodRunning || got.ResourceVersion != "2" {
		t.Errorf("the new version lost its own status or resourceVersion: %q %q", got.Status.Phase, got.ResourceVersion)
	}

	newImage := cached.DeepCopy()
	newImage.Spec.Containers[0].Image = "img:2"
	got = transform(newImage)
	if got.Spec.Containers[0].Image != "img:2" || &got.Spec.Containers[0] == &cached.Spec.Containers[0] {
		t.Errorf("a changed spec was replaced by the cached one")
	}
	if !sameMap(got.Labels, cached.Labels) {
		t.Errorf("the unchanged labels of a version with a new spec are not shared")
	}

	recreated := cached.DeepCopy()
	recreated.UID = "uid-a1-again"
	got = transform(recreated)
	if &got.Spec.Containers[0] == &cached.Spec.Containers[0] || sameMap(got.Labels, cached.Labels) {
		t.Errorf("a pod of another UID shares the cached pod's values")
	}
}

// TestDesiredSharesTheCachedAnnotations: the cache keeps a pod with the
// config source annotation, so the copy desired hands on shares the
// cached pod's annotations instead of copying them; a mirror pod keeps
// its own source; a pod that did not go through the transform is copied,
// the source annotation added to the copy only.
func TestDesiredSharesTheCachedAnnotations(t *testing.T) {
	tr := &cacheTransform{}
	apiPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a1", Namespace: "default", UID: "uid-a1", ResourceVersion: "7",
		Annotations: map[string]string{"team": "a"}}}
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m-node-a", Namespace: "kube-system", UID: "uid-m",
		Annotations: map[string]string{AnnotationConfigMirror: "hash", AnnotationConfigSource: "file"}}}
	noAnnotations := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a2", Namespace: "default", UID: "uid-a2"}}
	for _, p := range []*corev1.Pod{apiPod, mirror, noAnnotations} {
		if _, err := tr.transform(p); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"team": "a", AnnotationConfigSource: SourceName}
	if !reflect.DeepEqual(apiPod.Annotations, want) {
		t.Fatalf("cached annotations %v, want %v", apiPod.Annotations, want)
	}
	if got := noAnnotations.Annotations[AnnotationConfigSource]; got != SourceName {
		t.Fatalf("a pod without annotations is cached with config.source %q, want %q", got, SourceName)
	}
	if got := mirror.Annotations[AnnotationConfigSource]; got != "file" {
		t.Fatalf("the mirror pod's config.source became %q, want its own (file)", got)
	}
	out := desired(apiPod)
	if reflect.ValueOf(out.Annotations).UnsafePointer() != reflect.ValueOf(apiPod.Annotations).UnsafePointer() {
		t.Fatal("desired copied the cached pod's annotations instead of sharing them")
	}
	if out.ResourceVersion != "" {
		t.Fatalf("desired kept resourceVersion %q", out.ResourceVersion)
	}

	fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a3", UID: "uid-a3", Annotations: map[string]string{"team": "b"}}}
	out = desired(fresh)
	if out.Annotations[AnnotationConfigSource] != SourceName || out.Annotations["team"] != "b" {
		t.Fatalf("desired of an untransformed pod: annotations %v", out.Annotations)
	}
	if _, ok := fresh.Annotations[AnnotationConfigSource]; ok {
		t.Fatal("desired wrote the source annotation into the pod it copied")
	}
}
