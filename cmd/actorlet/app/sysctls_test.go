package app

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// --allowed-unsafe-sysctls reaches admission: a pattern allows its
// sysctls beside the safe ones; an invalid one stops the node at start.
func TestSysctlAdmission(t *testing.T) {
	s, err := sysctlAdmission([]string{"net.core.*"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: name, Value: "1"}}}}}
	}
	for name, want := range map[string]string{
		"net.core.somaxconn":     "",
		"kernel.shm_rmid_forced": "",
		"kernel.msgmax":          "SysctlForbidden",
	} {
		if reason, msg := s.Admit(pod(name), nil); reason != want {
			t.Errorf("%s: reason %q (%s), want %q", name, reason, msg, want)
		}
	}
	if _, err := sysctlAdmission([]string{"kernel.panic"}, zap.NewNop()); err == nil || !strings.Contains(err.Error(), "--allowed-unsafe-sysctls") {
		t.Errorf("an unnamespaced pattern: err = %v", err)
	}
}
