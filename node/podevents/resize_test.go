package podevents_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/actorlet/actorlet/node/podevents"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// A resize's events carry the kubelet's reasons and messages: the prefix,
// then the allocation (and generation, and error) as the kubelet's JSON.
func TestResizeEvents(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	r := podevents.New(fake)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", Generation: 2},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c0", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100")},
		}}}}}
	r.Recorded(pod, []*pb.Envelope{
		env(&pb.Event{Kind: &pb.Event_PodResizePending{PodResizePending: &pb.PodResizePending{Reason: "Deferred",
			Message: "Node didn't have enough resource: cpu, requested: 3000, capacity: 2000", Generation: 2}}}),
		env(&pb.Event{Kind: &pb.Event_PodResizePending{PodResizePending: &pb.PodResizePending{Reason: "Infeasible", Message: "no", Generation: 3}}}),
		env(&pb.Event{Kind: &pb.Event_PodResizePending{PodResizePending: &pb.PodResizePending{}}}), // withdrawn: nothing
		env(&pb.Event{Kind: &pb.Event_PodResizeAllocated{PodResizeAllocated: &pb.PodResizeAllocated{Containers: []string{"c0"}, Generation: 2}}}),
		env(&pb.Event{Kind: &pb.Event_ContainerResizeFailed{ContainerResizeFailed: &pb.ContainerResizeFailed{Name: "c0", Message: "refused"}}}),
		env(&pb.Event{Kind: &pb.Event_ContainerResized{ContainerResized: &pb.ContainerResized{Name: "c0"}}}),
		env(&pb.Event{Kind: &pb.Event_PodResizeCompleted{PodResizeCompleted: &pb.PodResizeCompleted{Generation: 2}}}),
	})
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	want := []string{
		`Warning ResizeDeferred Pod resize Deferred: {"generation":2,"error":"Node didn't have enough resource: cpu, requested: 3000, capacity: 2000"}`,
		`Warning ResizeInfeasible Pod resize Infeasible: {"generation":3,"error":"no"}`,
		`Normal ResizeStarted Pod resize started: {"containers":[{"name":"c0","resources":{"limits":{"cpu":"100m","memory":"100"},"requests":{"cpu":"100m","memory":"100"}}}],"generation":2}`,
		`Warning ResizeError Pod resize error: {"containers":[{"name":"c0","resources":{"limits":{"cpu":"100m","memory":"100"},"requests":{"cpu":"100m","memory":"100"}}}],"generation":2,"error":"refused"}`,
		`Normal ResizeCompleted Pod resize completed: {"containers":[{"name":"c0","resources":{"limits":{"cpu":"100m","memory":"100"},"requests":{"cpu":"100m","memory":"100"}}}],"generation":2}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
}
