package nodeactor

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestStatusConditionsAndTransitions(t *testing.T) {
	m := Machine{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")}}
	t0 := time.Unix(1000, 0)
	st := Status(nil, m, RuntimeHealth{Name: "containerd", Version: "2.4.2"}, nil, t0)
	ready := Ready(&st)
	if ready.Type != corev1.NodeReady || ready.Status != corev1.ConditionTrue || ready.Reason != "KubeletReady" {
		t.Fatalf("ready = %+v", ready)
	}
	if st.NodeInfo.ContainerRuntimeVersion != "containerd://2.4.2" {
		t.Fatalf("runtime version %q", st.NodeInfo.ContainerRuntimeVersion)
	}
	// Nothing changed: same transition time, newer heartbeat, not "changed".
	st2 := Status(&st, m, RuntimeHealth{Name: "containerd", Version: "2.4.2"}, nil, t0.Add(time.Minute))
	if r2, r := Ready(&st2), Ready(&st); !r2.LastTransitionTime.Equal(&r.LastTransitionTime) || changed(&st, st2) {
		t.Fatalf("a heartbeat alone changed the status: %+v", r2)
	}
	// The runtime goes away: NotReady with the reason, a new transition.
	st3 := Status(&st2, m, RuntimeHealth{Err: errors.New("connection refused")}, nil, t0.Add(2*time.Minute))
	r := Ready(&st3)
	if r.Status != corev1.ConditionFalse || r.Reason != "KubeletNotReady" || !changed(&st2, st3) ||
		!r.LastTransitionTime.Time.Equal(t0.Add(2*time.Minute)) || st3.NodeInfo.ContainerRuntimeVersion != "containerd://2.4.2" {
		t.Fatalf("runtime down: %+v (runtime %q)", r, st3.NodeInfo.ContainerRuntimeVersion)
	}
}

func TestStatusTakesPressureConditions(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	st := Status(nil, Machine{}, RuntimeHealth{Name: "sim", Version: "1"}, []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, Reason: "KubeletHasInsufficientMemory", Message: "low"},
	}, t0)
	for _, c := range st.Conditions {
		switch c.Type {
		case corev1.NodeMemoryPressure:
			if c.Status != corev1.ConditionTrue || c.Reason != "KubeletHasInsufficientMemory" {
				t.Errorf("memory pressure %+v", c)
			}
		case corev1.NodeDiskPressure, corev1.NodePIDPressure:
			if c.Status != corev1.ConditionFalse {
				t.Errorf("%s %+v", c.Type, c)
			}
		}
	}
}

// The node declares the features of its Machine (the API server checks a
// pod update's needs against them).
func TestStatusDeclaresFeatures(t *testing.T) {
	m := Machine{DeclaredFeatures: []string{"InPlacePodVerticalScalingInitContainers"}}
	st := Status(nil, m, RuntimeHealth{Name: "containerd", Version: "2.4.2"}, nil, time.Unix(1000, 0))
	if len(st.DeclaredFeatures) != 1 || st.DeclaredFeatures[0] != "InPlacePodVerticalScalingInitContainers" {
		t.Fatalf("declaredFeatures %v", st.DeclaredFeatures)
	}
}
