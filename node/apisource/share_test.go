package apisource

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// templatePod is a pod of one template as the API server's answer decodes
// it: every value freshly allocated.
func templatePod(name, image string) *corev1.Pod {
	secs := int64(300)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			Labels:          map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "uid-rs"}}},
		Spec: corev1.PodSpec{NodeName: "node-a", SchedulerName: "default-scheduler", RestartPolicy: corev1.RestartPolicyAlways,
			Containers:      []corev1.Container{{Name: "c", Image: image, TerminationMessagePath: "/dev/termination-log"}},
			Tolerations:     []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}},
			NodeSelector:    map[string]string{"pool": "a"},
			SecurityContext: &corev1.PodSecurityContext{}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: image, ImageID: "sha256:" + image}}},
	}
}

func samePointer[T any](a, b []T) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestPodsShareTheirTemplatesValues: two pods of one template, decoded
// apart, hold one copy of their containers, tolerations, labels, owner
// references, node selector, security context, host IPs and status
// strings after the cache's transform, and read exactly as before; a pod
// with another image keeps its own containers.
func TestPodsShareTheirTemplatesValues(t *testing.T) {
	tr := &cacheTransform{share: newPodSharer()}
	a, b, other := templatePod("a", "img:1"), templatePod("b", "img:1"), templatePod("c", "img:2")
	before := []*corev1.Pod{a.DeepCopy(), b.DeepCopy(), other.DeepCopy()}
	for _, p := range []*corev1.Pod{a, b, other} {
		if _, err := tr.transform(p); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range []*corev1.Pod{a, b, other} {
		want := before[i]
		want.Annotations = map[string]string{AnnotationConfigSource: SourceName}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("pod %s changed by the transform:\n got %+v\nwant %+v", p.Name, p, want)
		}
	}
	shared := map[string]bool{
		"containers":      samePointer(a.Spec.Containers, b.Spec.Containers),
		"tolerations":     samePointer(a.Spec.Tolerations, b.Spec.Tolerations),
		"owner refs":      samePointer(a.OwnerReferences, b.OwnerReferences),
		"host IPs":        samePointer(a.Status.HostIPs, b.Status.HostIPs),
		"labels":          sameMap(a.Labels, b.Labels),
		"annotations":     sameMap(a.Annotations, b.Annotations),
		"node selector":   sameMap(a.Spec.NodeSelector, b.Spec.NodeSelector),
		"security ctx":    a.Spec.SecurityContext == b.Spec.SecurityContext,
		"image ID":        sameString(a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID),
		"node name":       sameString(a.Spec.NodeName, b.Spec.NodeName),
		"condition type":  sameString(string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)),
		"conditions":      samePointer(a.Status.Conditions, b.Status.Conditions),
		"other's labels":  sameMap(a.Labels, other.Labels),
		"other's tolerat": samePointer(a.Spec.Tolerations, other.Spec.Tolerations),
	}
	for what, ok := range shared {
		if !ok {
			t.Errorf("%s not shared", what)
		}
	}
	if samePointer(a.Spec.Containers, other.Spec.Containers) {
		t.Error("a pod with another image shares the template's containers")
	}
}

// TestRecentKeepsTheLastDistinctValues: a value seen among the last
// recentKept distinct ones is shared, an older one is not, and a shared
// value moves to the front.
func TestRecentKeepsTheLastDistinctValues(t *testing.T) {
	r := recent[[]string]{equal: deepEqual[[]string]}
	first := r.share([]string{"v0"})
	for i := 1; i < recentKept; i++ {
		r.share([]string{fmt.Sprint("v", i)})
	}
	if got := r.share([]string{"v0"}); !samePointer(got, first) {
		t.Fatal("v0, among the last recentKept values, was not shared")
	}
	// v0 is the most recent now: recentKept-1 new values evict v1, not v0.
	for i := range recentKept - 1 {
		r.share([]string{fmt.Sprint("new", i)})
	}
	if got := r.share([]string{"v0"}); !samePointer(got, first) {
		t.Fatal("v0, moved to the front when shared, was evicted")
	}
	if len(r.vals) != recentKept {
		t.Fatalf("%d values kept, want %d", len(r.vals), recentKept)
	}
	v1 := []string{"v1"}
	if got := r.share(v1); !samePointer(got, v1) {
		t.Fatal("v1, evicted, was still shared")
	}
}
