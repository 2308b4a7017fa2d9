package app

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseTaints(t *testing.T) {
	got, err := parseTaints([]string{"dedicated=gpu:NoSchedule", "maintenance:NoExecute"})
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, {Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("taints = %+v", got)
	}
	for _, bad := range []string{"dedicated=gpu", "=x:NoSchedule", "k=v:Sometimes"} {
		if _, err := parseTaints([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v, want one naming it", bad, err)
		}
	}
}

func TestMachineDescribesTheHost(t *testing.T) {
	m := machine("node-1", "127.0.0.1", 50)
	if m.Capacity.Pods().Value() != 50 || m.Capacity.Cpu().Value() < 1 || m.Capacity.Memory().Value() <= 0 {
		t.Fatalf("capacity %v", m.Capacity)
	}
	if m.Addresses[0].Address != "127.0.0.1" || m.Addresses[1].Address != "node-1" || m.Info.KernelVersion == "" {
		t.Fatalf("addresses %v info %+v", m.Addresses, m.Info)
	}
}
