package admit

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// SysctlForbidden is the reason of a pod refused for its sysctls (the
// kubelet's sysctl.ForbiddenReason).
const SysctlForbidden = "SysctlForbidden"

// safeSysctls are the kubelet's safe sysctls (k8s.io/kubernetes v1.37.2
// pkg/kubelet/sysctl/safe_sysctls.go), each with the kernel version from
// which it is namespaced, when it has one: older kernels leave it out.
var safeSysctls = []struct{ name, kernel string }{
	{name: "kernel.shm_rmid_forced"},
	{name: "net.ipv4.ip_local_port_range"},
	{name: "net.ipv4.tcp_syncookies"},
	{name: "net.ipv4.ping_group_range"},
	{name: "net.ipv4.ip_unprivileged_port_start"},
	{name: "net.ipv4.ip_local_reserved_ports", kernel: "3.16"},
	{name: "net.ipv4.tcp_keepalive_time", kernel: "4.5"},
	{name: "net.ipv4.tcp_fin_timeout", kernel: "4.6"},
	{name: "net.ipv4.tcp_keepalive_intvl", kernel: "4.5"},
	{name: "net.ipv4.tcp_keepalive_probes", kernel: "4.5"},
	{name: "net.ipv4.tcp_rmem", kernel: "4.15"},
	{name: "net.ipv4.tcp_wmem", kernel: "4.15"},
	{name: "net.ipv4.tcp_slow_start_after_idle", kernel: "4.15"},
	{name: "net.ipv4.tcp_notsent_lowat", kernel: "4.6"},
}

// SafeSysctls are the safe sysctls on a kernel of release kernel (as
// uname -r prints it). A release that does not parse keeps only those
// namespaced on every kernel, as the kubelet does when it cannot read it.
func SafeSysctls(kernel string) []string {
	v, err := version.ParseGeneric(strings.TrimSpace(kernel))
	var out []string
	for _, s := range safeSysctls {
		if s.kernel == "" || (err == nil && v.AtLeast(version.MustParseGeneric(s.kernel))) {
			out = append(out, s.name)
		}
	}
	return out
}

// sysctlPattern is what --allowed-unsafe-sysctls accepts (the kubelet's
// policy validation IsValidSysctlPattern): dot- or slash-separated
// segments, the last one possibly ending in '*'.
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// sysctlMaxLength is the API's limit on a sysctl name.
const sysctlMaxLength = 253

// Sysctls admits the pods whose spec.securityContext.sysctls are all
// allowed, as the kubelet's sysctl allowlist admit handler does: a sysctl
// is allowed when it is a safe one or matches an allowed unsafe one (a
// name, or a prefix ending in '*'), and the pod does not share the host
// namespace it belongs to (net.* with hostNetwork, kernel.shm*, kernel.msg*,
// kernel.sem and fs.mqueue.* with hostIPC, user.* without a user
// namespace). Names may be written with '/' for '.', as sysctl(8) allows.
// It implements actors.Admitter; it keeps no state, so it is safe for
// concurrent use.
type Sysctls struct {
	names    map[string]utilsysctl.Namespace
	prefixes map[string]utilsysctl.Namespace
}

// NewSysctls returns the admitter of the patterns allowed: the safe
// sysctls of the kernel (SafeSysctls) and the operator's unsafe ones
// (--allowed-unsafe-sysctls). An invalid pattern, or one not known to be
// namespaced (which no pod could be allowed to set), is an error naming
// it, as it stops the kubelet at start.
func NewSysctls(patterns ...string) (*Sysctls, error) {
	s := &Sysctls{names: map[string]utilsysctl.Namespace{}, prefixes: map[string]utilsysctl.Namespace{}}
	for _, p := range patterns {
		if len(p) > sysctlMaxLength || !sysctlPattern.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s",
				p, sysctlMaxLength, strings.Trim(sysctlPattern.String(), "^$"))
		}
		ns, nameOrPrefix, prefixed := utilsysctl.GetNamespace(p)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", nameOrPrefix)
		}
		if prefixed {
			s.prefixes[nameOrPrefix] = ns
		} else {
			s.names[nameOrPrefix] = ns
		}
	}
	return s, nil
}

// Admit returns SysctlForbidden and the kubelet's message ("forbidden
// sysctl: ...") for the first sysctl of pod that is not allowed; "" when
// all are.
func (s *Sysctls) Admit(pod *corev1.Pod, _ []*corev1.Pod) (reason, message string) {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return "", ""
	}
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, sysctl := range sc.Sysctls {
		if err := s.check(sysctl.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC, hostUsers); err != nil {
			return SysctlForbidden, fmt.Sprintf("forbidden sysctl: %v", err)
		}
	}
	return "", ""
}

func (s *Sysctls) check(name string, hostNet, hostIPC, hostUsers bool) error {
	name = utilsysctl.NormalizeName(name)
	ns, found := s.names[name]
	if !found {
		for p, pns := range s.prefixes {
			if strings.HasPrefix(name, p) {
				ns, found = pns, true
				break
			}
		}
	}
	if !found {
		return fmt.Errorf("%q not allowlisted", name)
	}
	if (ns == utilsysctl.IPCNamespace && hostIPC) || (ns == utilsysctl.NetNamespace && hostNet) ||
		(ns == utilsysctl.UserNamespace && hostUsers) {
		return fmt.Errorf("%q not allowed with host %s enabled", name, ns)
	}
	return nil
}
