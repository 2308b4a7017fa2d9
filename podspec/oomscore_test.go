package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// qosRes builds requirements from "cpu"/"memory" quantities; "" leaves one out.
func qosRes(reqCPU, reqMem, limCPU, limMem string) corev1.ResourceRequirements {
	list := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return corev1.ResourceRequirements{Requests: list(reqCPU, reqMem), Limits: list(limCPU, limMem)}
}

func qosPod(rs ...corev1.ResourceRequirements) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	for i, r := range rs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	return p
}

func TestQOSClass(t *testing.T) {
	none := corev1.ResourceRequirements{}
	guaranteed := qosRes("1", "1Gi", "1", "1Gi")
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{"no containers", qosPod(), corev1.PodQOSBestEffort},
		{"nothing set", qosPod(none, none), corev1.PodQOSBestEffort},
		{"ephemeral-storage alone is not cpu or memory", qosPod(corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}), corev1.PodQOSBestEffort},
		{"zero requests and limits", qosPod(qosRes("0", "0", "0", "0")), corev1.PodQOSBestEffort},
		{"requests equal limits", qosPod(guaranteed, guaranteed), corev1.PodQOSGuaranteed},
		{"equal in other units", qosPod(qosRes("1000m", "1024Mi", "1", "1Gi")), corev1.PodQOSGuaranteed},
		{"limits alone: requests default to them", qosPod(qosRes("", "", "500m", "64Mi")), corev1.PodQOSGuaranteed},
		{"cpu request defaulted, memory set", qosPod(qosRes("", "64Mi", "500m", "64Mi")), corev1.PodQOSGuaranteed},
		{"requests alone", qosPod(qosRes("100m", "64Mi", "", "")), corev1.PodQOSBurstable},
		{"request below limit", qosPod(qosRes("100m", "64Mi", "100m", "128Mi")), corev1.PodQOSBurstable},
		{"memory limit alone", qosPod(qosRes("", "", "", "64Mi")), corev1.PodQOSBurstable},
		{"one guaranteed, one best effort", qosPod(guaranteed, none), corev1.PodQOSBurstable},
		{"init container burstable", func() *corev1.Pod {
			p := qosPod(guaranteed)
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: qosRes("1", "", "", "")}}
			return p
		}(), corev1.PodQOSBurstable},
		{"init container guaranteed too", func() *corev1.Pod {
			p := qosPod(guaranteed)
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: qosRes("", "", "2", "2Gi")}}
			return p
		}(), corev1.PodQOSGuaranteed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lifecycle.QOSClass(tt.pod); got != tt.want {
				t.Errorf("QOSClass = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestContainerOOMScoreAdj(t *testing.T) {
	const capacity = 10 << 30 // 10Gi
	prio := func(n int32) *int32 { return &n }
	critical := func(p *corev1.Pod, class string, priority *int32, annotations map[string]string) *corev1.Pod {
		p.Spec.PriorityClassName, p.Spec.Priority, p.Annotations = class, priority, annotations
		return p
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		capacity int64
		want     int64
	}{
		{"guaranteed", qosPod(qosRes("1", "1Gi", "1", "1Gi")), capacity, -997},
		{"guaranteed from limits alone (static pod, not defaulted)", qosPod(qosRes("", "", "1", "1Gi")), capacity, -997},
		{"best effort", qosPod(corev1.ResourceRequirements{}), capacity, 1000},
		{"burstable, 10% of memory", qosPod(qosRes("100m", "1Gi", "", "")), capacity, 900},
		{"burstable, 1Mi rounds to 1000 and takes 999", qosPod(qosRes("", "1Mi", "", "")), capacity, 999},
		{"burstable, no memory request", qosPod(qosRes("100m", "", "", "")), capacity, 999},
		{"burstable, memory limit alone requests the limit", qosPod(qosRes("100m", "", "", "5Gi")), capacity, 500},
		{"burstable, 99.9% of memory clamps to 3", qosPod(qosRes("", "10229Mi", "", "")), capacity, 3},
		{"burstable, all of memory", qosPod(qosRes("", "10Gi", "", "")), capacity, 3},
		{"burstable, more than the node", qosPod(qosRes("", "20Gi", "", "")), capacity, 3},
		{"burstable, unknown capacity", qosPod(qosRes("", "1Gi", "", "")), 0, 999},
		{"node critical by priority", critical(qosPod(corev1.ResourceRequirements{}), "system-node-critical", prio(2000001000), nil), capacity, -997},
		{"node critical static pod", critical(qosPod(qosRes("", "1Gi", "", "")), "system-node-critical", nil,
			map[string]string{"kubernetes.io/config.source": "file"}), capacity, -997},
		{"node critical mirror pod", critical(qosPod(corev1.ResourceRequirements{}), "system-node-critical", nil,
			map[string]string{"kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "x"}), capacity, -997},
		{"system-node-critical class without critical priority", critical(qosPod(corev1.ResourceRequirements{}), "system-node-critical", prio(1000),
			map[string]string{"kubernetes.io/config.source": "api"}), capacity, 1000},
		{"cluster critical is not node critical", critical(qosPod(qosRes("", "1Gi", "", "")), "system-cluster-critical", prio(2000000000), nil), capacity, 900},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ContainerOOMScoreAdj(tt.pod, &tt.pod.Spec.Containers[0], tt.capacity); got != tt.want {
				t.Errorf("ContainerOOMScoreAdj = %d, want %d", got, tt.want)
			}
		})
	}
}
