package podspec

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// Options shape the CRI configs built from pod specs: the node's settings
// (the kubelet's configuration) that a pod's configs depend on.
type Options struct {
	// PodLogsDir is where container logs go: <dir>/<ns>_<name>_<uid>/<container>/<attempt>.log.
	PodLogsDir string
	// RuntimeHandler selects a runtime class handler ("" is the default).
	RuntimeHandler string
	// CgroupParent for pod sandboxes ("" leaves it to the runtime), unless
	// CgroupsPerQOS.
	CgroupParent string
	// CgroupsPerQOS puts each pod in its own cgroup under its QoS class's
	// (PodCgroupParent of CgroupRoot), for the cgroupfs driver; the pod's
	// cgroup is removed with the pod.
	CgroupsPerQOS bool
	CgroupRoot    string
	// ClusterDNS are the cluster DNS servers of ClusterFirst pods (the
	// kubelet's clusterDNS); none makes ClusterFirst fall back to Default.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain, e.g. "cluster.local" (the
	// kubelet's clusterDomain): the searches of ClusterFirst pods and the
	// FQDN of pods with setHostnameAsFQDN.
	ClusterDomain string
	// ResolvConf is the host resolv.conf of Default pods, and the base of
	// ClusterFirst ones ("" = none: Default pods resolve via 127.0.0.1).
	ResolvConf string
	// ReadFile reads ResolvConf; nil is os.ReadFile.
	ReadFile ReadFileFunc
	// MemoryCapacity is the node's memory capacity in bytes, the base of
	// a Burstable container's OOM score (ContainerOOMScoreAdj; 0: unknown).
	MemoryCapacity int64
}

// SandboxConfigBestEffort is SandboxConfig for callers that cannot handle
// its error. Where SandboxConfig fails, it returns the sandbox config
// without the host's DNS (the pod's own dnsConfig alone; with none, the
// runtime's default) and with the pod's short hostname.
func SandboxConfigBestEffort(pod *corev1.Pod, attempt uint32, o Options) *runtimeapi.PodSandboxConfig {
	cfg, _ := sandboxConfig(pod, attempt, o)
	return cfg
}

// SandboxConfig builds the CRI sandbox config of a pod's sandbox
// attempt: metadata and labels, hostname (see PodHostname), DNS (see
// PodDNSConfig), the port mappings of container ports with a hostPort,
// the log directory and the pod-level security context. The error names
// the pod: its host resolv.conf cannot be read, or its FQDN is too long.
func SandboxConfig(pod *corev1.Pod, attempt uint32, o Options) (*runtimeapi.PodSandboxConfig, error) {
	cfg, err := sandboxConfig(pod, attempt, o)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// sandboxConfig always returns a usable config, and the first error met
// building it (see SandboxConfigBestEffort for what it then leaves out).
func sandboxConfig(pod *corev1.Pod, attempt uint32, o Options) (*runtimeapi.PodSandboxConfig, error) {
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[cri.LabelPodUID] = string(pod.UID)
	labels[cri.LabelPodName] = pod.Name
	labels[cri.LabelPodNamespace] = pod.Namespace
	labels[cri.LabelManaged] = cri.ManagedValue
	annotations := map[string]string{}
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	var firstErr error
	hostname, err := PodHostname(pod, o.ClusterDomain)
	if err != nil {
		firstErr = err
		hostname = truncateHostname(orDefault(pod.Spec.Hostname, pod.Name))
	}
	if pod.Spec.HostNetwork {
		hostname = "" // the node's: runtimes cannot set one in the host's UTS namespace
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt,
		},
		Hostname:     hostname,
		Labels:       labels,
		Annotations:  annotations,
		LogDirectory: PodLogDir(o.PodLogsDir, pod),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent:    cgroupParent(pod, o),
			SecurityContext: sandboxSecurityContext(pod),
			Sysctls:         sandboxSysctls(pod),
		},
	}
	dns, err := PodDNSConfig(pod, o)
	if err != nil {
		firstErr = cmp.Or(firstErr, err)
		// Without the host's: the pod's own, as DNSNone would have it.
		none := *pod
		none.Spec.DNSPolicy = corev1.DNSNone
		dns, _ = PodDNSConfig(&none, Options{})
	}
	cfg.DnsConfig = dns.Config
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{
				Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
			})
		}
	}
	return cfg, firstErr
}

// PodHostname is the hostname of the pod's sandbox as the kubelet sets it:
// spec.hostname, else the pod's name, cut to 63 characters (and then of
// trailing '-' and '.'); with setHostnameAsFQDN and a subdomain, the FQDN
// <hostname>.<subdomain>.<ns>.svc.<clusterDomain>, at most 64 characters.
// The error names the pod. (hostNetwork pods keep the node's hostname: the
// sandbox config leaves it empty.)
func PodHostname(pod *corev1.Pod, clusterDomain string) (string, error) {
	hostname := truncateHostname(orDefault(pod.Spec.Hostname, pod.Name))
	if hostname == "" {
		return "", fmt.Errorf("pod %s/%s: hostname %q is invalid once cut to 63 characters", pod.Namespace, pod.Name, orDefault(pod.Spec.Hostname, pod.Name))
	}
	if pod.Spec.SetHostnameAsFQDN == nil || !*pod.Spec.SetHostnameAsFQDN || pod.Spec.Subdomain == "" {
		return hostname, nil
	}
	fqdn := fmt.Sprintf("%s.%s.%s.svc.%s", hostname, pod.Spec.Subdomain, pod.Namespace, clusterDomain)
	if len(fqdn) > 64 {
		return "", fmt.Errorf("pod %s/%s: FQDN %s is too long (64 characters is the max, %d characters requested)",
			pod.Namespace, pod.Name, fqdn, len(fqdn))
	}
	return fqdn, nil
}

// truncateHostname cuts a hostname to 63 characters as the kubelet does,
// without a trailing '-' or '.'.
func truncateHostname(h string) string {
	if len(h) <= 63 {
		return h
	}
	return strings.TrimRight(h[:63], "-.")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// PodLogDir is the kubelet's log directory of a pod.
func PodLogDir(root string, pod *corev1.Pod) string {
	if root == "" {
		return ""
	}
	return filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// sandboxSecurityContext is the pod-level security context. The sandbox is
// privileged when a container is: runtimes refuse privileged containers in
// unprivileged sandboxes.
func sandboxSecurityContext(pod *corev1.Pod) *runtimeapi.LinuxSandboxSecurityContext {
	sc := &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: namespaceOptions(pod)}
	sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = podIdentity(pod)
	for i := range pod.Spec.Containers {
		if c := pod.Spec.Containers[i].SecurityContext; c != nil && c.Privileged != nil && *c.Privileged {
			sc.Privileged = true
		}
	}
	return sc
}

// sandboxSysctls are the pod's spec.securityContext.sysctls for the
// runtime to set in the sandbox's namespaces, as the kubelet passes them:
// names with '.' separators (runc refuses '/'), the last of a name given
// twice winning; nil when there are none. Admission has checked them
// (see package admit).
func sandboxSysctls(pod *corev1.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return nil
	}
	out := make(map[string]string, len(sc.Sysctls))
	for _, s := range sc.Sysctls {
		out[utilsysctl.NormalizeName(s.Name)] = s.Value
	}
	return out
}

// podIdentity is the user, group and supplemental groups the pod's security
// context sets for all its containers (nil where it sets none). The
// fsGroup comes first among the supplemental groups, as the kubelet adds
// it, so that a container of any user can read the volumes given that
// group (see package volumes).
func podIdentity(pod *corev1.Pod) (user, group *runtimeapi.Int64Value, groups []int64) {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return nil, nil, nil
	}
	if psc.RunAsUser != nil {
		user = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
	}
	if psc.RunAsGroup != nil {
		group = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
	}
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	groups = append(groups, psc.SupplementalGroups...)
	return user, group, groups
}

func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostPID {
		ns.Pid = runtimeapi.NamespaceMode_NODE
	} else if pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace {
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return ns
}

func protocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	default:
		return runtimeapi.Protocol_TCP
	}
}

// LiteralContainerConfig builds the CRI config of a container's attempt
// with the container's literal env values alone (see LiteralEnv) on a node
// of unknown memory capacity: for callers with nothing to resolve valueFrom
// and envFrom with (benchmarks). The actors use ContainerConfig.
func LiteralContainerConfig(pod *corev1.Pod, c *corev1.Container, attempt uint32) *runtimeapi.ContainerConfig {
	return ContainerConfig(pod, c, attempt, LiteralEnv(c), Options{})
}

// ContainerConfig builds the CRI config of a container's attempt
// with its resolved environment (see ContainerEnv); the $(VAR) references
// of command and args are expanded against that environment, as the
// kubelet does. The config holds the environment's values, secrets
// included: it goes to the runtime and nowhere else. The OOM score
// adjustment of a Burstable container depends on o.MemoryCapacity (0:
// unknown).
func ContainerConfig(pod *corev1.Pod, c *corev1.Container, attempt uint32, env Env, o Options) *runtimeapi.ContainerConfig {
	labels := map[string]string{
		cri.LabelPodUID:        string(pod.UID),
		cri.LabelPodName:       pod.Name,
		cri.LabelPodNamespace:  pod.Namespace,
		cri.LabelContainerName: c.Name,
		cri.LabelManaged:       cri.ManagedValue,
	}
	lookup := lookupIn(env.Map())
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:      &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image},
		Command:    expandAll(c.Command, lookup),
		Args:       expandAll(c.Args, lookup),
		WorkingDir: c.WorkingDir,
		Labels:     labels,
		Annotations: map[string]string{
			"io.kubernetes.container.restartCount": strconv.Itoa(int(attempt) - 1),
			cri.AnnotationTerminationMessagePath:   terminationMessagePath(c),
			cri.AnnotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
		},
		LogPath: filepath.Join(c.Name, strconv.Itoa(int(attempt)-1)+".log"),
		Stdin:   c.Stdin, StdinOnce: c.StdinOnce, Tty: c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       resources(pod, c, o.MemoryCapacity),
			SecurityContext: securityContext(pod, c),
		},
	}
	cfg.Envs = make([]*runtimeapi.KeyValue, 0, len(env.Vars))
	for _, e := range env.Vars {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	return cfg
}

// UpdateContainerResourcesRequest asks the runtime to give the running
// container id the Linux resources of c (CPU shares, quota and period,
// memory limit, OOM score adjustment): those ContainerConfig creates a
// container of c with, as the kubelet's in-place resize sends them.
func UpdateContainerResourcesRequest(pod *corev1.Pod, c *corev1.Container, id string, o Options) *runtimeapi.UpdateContainerResourcesRequest {
	return &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: resources(pod, c, o.MemoryCapacity)}
}

func resources(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{OomScoreAdj: ContainerOOMScoreAdj(pod, c, memoryCapacity)}
	if cpu, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.CpuShares = max(2, cpu.MilliValue()*1024/1000)
	} else if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuShares = max(2, cpu.MilliValue()*1024/1000)
	} else {
		r.CpuShares = 2
	}
	if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuPeriod = 100000
		r.CpuQuota = max(1000, cpu.MilliValue()*100000/1000)
	}
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		r.MemoryLimitInBytes = mem.Value()
	}
	return r
}

func securityContext(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerSecurityContext {
	sc := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: namespaceOptions(pod)}
	sc.RunAsUser, sc.RunAsGroup, sc.SupplementalGroups = podIdentity(pod)
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *csc.RunAsUser}
		}
		if csc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *csc.RunAsGroup}
		}
		if csc.Privileged != nil {
			sc.Privileged = *csc.Privileged
		}
		if csc.ReadOnlyRootFilesystem != nil {
			sc.ReadonlyRootfs = *csc.ReadOnlyRootFilesystem
		}
		// allowPrivilegeEscalation: false is no_new_privs, as the kubelet
		// sets it; unset leaves the runtime's default.
		if csc.AllowPrivilegeEscalation != nil {
			sc.NoNewPrivs = !*csc.AllowPrivilegeEscalation
		}
		if csc.Capabilities != nil {
			sc.Capabilities = &runtimeapi.Capability{}
			for _, a := range csc.Capabilities.Add {
				sc.Capabilities.AddCapabilities = append(sc.Capabilities.AddCapabilities, string(a))
			}
			for _, d := range csc.Capabilities.Drop {
				sc.Capabilities.DropCapabilities = append(sc.Capabilities.DropCapabilities, string(d))
			}
		}
	}
	return sc
}

// cgroupParent is the cgroup parent of the pod's sandbox.
func cgroupParent(pod *corev1.Pod, o Options) string {
	if o.CgroupsPerQOS {
		return PodCgroupParent(o.CgroupRoot, pod)
	}
	return o.CgroupParent
}
