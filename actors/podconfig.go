package actors

import (
	"fmt"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
)

// PodConfigOptions shape the CRI configs built from pod specs.
type PodConfigOptions struct {
	// PodLogsDir is where container logs go: <dir>/<ns>_<name>_<uid>/<container>/<attempt>.log.
	PodLogsDir string
	// RuntimeHandler selects a runtime class handler ("" is the default).
	RuntimeHandler string
	// CgroupParent for pod sandboxes ("" leaves it to the runtime).
	CgroupParent string
}

// SandboxConfig builds the CRI sandbox config of a pod's sandbox attempt.
func SandboxConfig(pod *corev1.Pod, attempt uint32, o PodConfigOptions) *runtimeapi.PodSandboxConfig {
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
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > 63 {
		hostname = hostname[:63]
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
			CgroupParent:    o.CgroupParent,
			SecurityContext: sandboxSecurityContext(pod),
		},
	}
	if pod.Spec.DNSConfig != nil {
		cfg.DnsConfig = &runtimeapi.DNSConfig{Servers: pod.Spec.DNSConfig.Nameservers, Searches: pod.Spec.DNSConfig.Searches}
		for _, opt := range pod.Spec.DNSConfig.Options {
			s := opt.Name
			if opt.Value != nil {
				s += ":" + *opt.Value
			}
			cfg.DnsConfig.Options = append(cfg.DnsConfig.Options, s)
		}
	}
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
	return cfg
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

// podIdentity is the user, group and supplemental groups the pod's security
// context sets for all its containers (nil where it sets none).
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
	return user, group, psc.SupplementalGroups
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

// ContainerConfig builds the CRI config of a container's attempt with the
// container's literal env values alone (see LiteralEnv): for callers with
// nothing to resolve valueFrom and envFrom with. The ContainerActor uses
// ContainerConfigWithEnv.
func ContainerConfig(pod *corev1.Pod, c *corev1.Container, attempt uint32) *runtimeapi.ContainerConfig {
	return ContainerConfigWithEnv(pod, c, attempt, LiteralEnv(c))
}

// ContainerConfigWithEnv builds the CRI config of a container's attempt
// with its resolved environment (see ContainerEnv); the $(VAR) references
// of command and args are expanded against that environment, as the
// kubelet does. The config holds the environment's values, secrets
// included: it goes to the runtime and nowhere else.
func ContainerConfigWithEnv(pod *corev1.Pod, c *corev1.Container, attempt uint32, env Env) *runtimeapi.ContainerConfig {
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
			"io.kubernetes.container.restartCount":           strconv.Itoa(int(attempt) - 1),
			"io.kubernetes.container.terminationMessagePath": c.TerminationMessagePath,
		},
		LogPath: filepath.Join(c.Name, strconv.Itoa(int(attempt)-1)+".log"),
		Stdin:   c.Stdin, StdinOnce: c.StdinOnce, Tty: c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       resources(c),
			SecurityContext: securityContext(pod, c),
		},
	}
	cfg.Envs = make([]*runtimeapi.KeyValue, 0, len(env.Vars))
	for _, e := range env.Vars {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	return cfg
}

func resources(c *corev1.Container) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{}
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
