package admit_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/actorlet/actorlet/node/admit"
)

func pod(name, cpu, mem string) *corev1.Pod {
	req := corev1.ResourceList{}
	if cpu != "" {
		req[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		req[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: req}}}}}
	p.Name = name
	return p
}

func TestResources(t *testing.T) {
	node := admit.Resources{Allocatable: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
		corev1.ResourcePods:   resource.MustParse("3"),
	}}
	withInit := pod("init", "500m", "")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "setup", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		admitted []*corev1.Pod
		reason   string
		message  string
	}{
		{name: "fits", pod: pod("a", "1", "512Mi"), admitted: []*corev1.Pod{pod("b", "1", "512Mi")}},
		{name: "best effort fits anywhere", pod: pod("a", "", ""), admitted: []*corev1.Pod{pod("b", "2", "1Gi")}},
		{name: "cpu", pod: pod("a", "1500m", ""), admitted: []*corev1.Pod{pod("b", "1", "")},
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000"},
		{name: "memory", pod: pod("a", "", "600Mi"), admitted: []*corev1.Pod{pod("b", "", "500Mi")},
			reason: "OutOfmemory", message: "Node didn't have enough resource: memory, requested: 629145600, used: 524288000, capacity: 1073741824"},
		{name: "init containers count at their peak", pod: withInit, admitted: []*corev1.Pod{pod("b", "1", "")},
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000"},
		{name: "pods", pod: pod("a", "", ""), admitted: []*corev1.Pod{pod("b", "", ""), pod("c", "", ""), pod("d", "", "")},
			reason: "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := node.Admit(tc.pod, tc.admitted)
			if reason != tc.reason || message != tc.message {
				t.Fatalf("Admit = %q %q, want %q %q", reason, message, tc.reason, tc.message)
			}
		})
	}
}
