package admit_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/node/admit"
)

func sysctlPod(names ...string) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
	p.Name = "s"
	if names != nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
	}
	return p
}

func TestSafeSysctlsByKernel(t *testing.T) {
	all := admit.SafeSysctls("6.8.0-45-generic")
	if len(all) != 14 || !slices.Contains(all, "net.ipv4.tcp_notsent_lowat") || !slices.Contains(all, "kernel.shm_rmid_forced") {
		t.Errorf("safe sysctls on 6.8 = %v, want the kubelet's 14", all)
	}
	old := admit.SafeSysctls("4.5.0")
	if slices.Contains(old, "net.ipv4.tcp_fin_timeout") || !slices.Contains(old, "net.ipv4.tcp_keepalive_time") ||
		!slices.Contains(old, "net.ipv4.ip_local_reserved_ports") || slices.Contains(old, "net.ipv4.tcp_rmem") {
		t.Errorf("safe sysctls on 4.5 = %v", old)
	}
	if got := admit.SafeSysctls("not a version"); len(got) != 5 {
		t.Errorf("safe sysctls of an unknown kernel = %v, want the 5 namespaced everywhere", got)
	}
}

func TestSysctls(t *testing.T) {
	s, err := admit.NewSysctls(append(admit.SafeSysctls("6.8.0"), "kernel.msg*", "net.core.somaxconn", "user.max_user_namespaces")...)
	if err != nil {
		t.Fatal(err)
	}
	hostNet, hostIPC, userNS := sysctlPod("net.ipv4.tcp_syncookies"), sysctlPod("kernel.shm_rmid_forced"), sysctlPod("user.max_user_namespaces")
	hostNet.Spec.HostNetwork, hostIPC.Spec.HostIPC = true, true
	no := false
	userNS.Spec.HostUsers = &no
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		message string // "" admitted
	}{
		{name: "no security context", pod: sysctlPod()},
		{name: "no sysctls", pod: sysctlPod([]string{}...)},
		{name: "safe", pod: sysctlPod("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_wmem")},
		{name: "slash separated", pod: sysctlPod("net/ipv4/ip_local_port_range")},
		{name: "unsafe allowed by name", pod: sysctlPod("net.core.somaxconn")},
		{name: "unsafe allowed by prefix", pod: sysctlPod("kernel.msgmax")},
		{name: "unsafe not allowed", pod: sysctlPod("kernel.shm_rmid_forced", "kernel.shmmax"),
			message: `forbidden sysctl: "kernel.shmmax" not allowlisted`},
		{name: "unknown", pod: sysctlPod("foo.bar"), message: `forbidden sysctl: "foo.bar" not allowlisted`},
		{name: "net with host network", pod: hostNet,
			message: `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{name: "ipc with host IPC", pod: hostIPC,
			message: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
		{name: "user without a user namespace", pod: sysctlPod("user.max_user_namespaces"),
			message: `forbidden sysctl: "user.max_user_namespaces" not allowed with host User enabled`},
		{name: "user in a user namespace", pod: userNS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := s.Admit(tc.pod, nil)
			wantReason := ""
			if tc.message != "" {
				wantReason = admit.SysctlForbidden
			}
			if reason != wantReason || message != tc.message {
				t.Fatalf("Admit = %q %q, want %q %q", reason, message, wantReason, tc.message)
			}
		})
	}
}

func TestNewSysctlsRefuses(t *testing.T) {
	for _, tc := range []struct{ pattern, err string }{
		{"Net.Core", "must have at most 253 characters and match regex"},
		{"net.*.foo", "must have at most 253 characters and match regex"},
		{"kernel.panic", `the sysctls "kernel.panic" are not known to be namespaced`},
		{"vm.*", `the sysctls "vm." are not known to be namespaced`},
	} {
		if _, err := admit.NewSysctls(tc.pattern); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NewSysctls(%q) = %v, want an error with %q", tc.pattern, err, tc.err)
		}
	}
	if _, err := admit.NewSysctls("net.*", "kernel.shm*", "fs.mqueue.*", "net/ipv4/ip_forward"); err != nil {
		t.Errorf("valid patterns refused: %v", err)
	}
}
