package staticpod

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Default values the API server would give a pod, for the fields actorlet
// reads.
const (
	DefaultTerminationGracePeriodSeconds int64 = 30
	DefaultSchedulerName                       = "default-scheduler"
	DefaultTerminationMessagePath              = "/dev/termination-log"
)

// ApplyDefaults fills the unset fields of pod that the API server's defaulting
// would fill and that actorlet relies on: restartPolicy Always, dnsPolicy
// ClusterFirst, terminationGracePeriodSeconds 30, schedulerName
// default-scheduler, an empty securityContext; and for every init and app
// container an imagePullPolicy (Always for a ":latest" or untagged, undigested
// image, IfNotPresent otherwise), terminationMessagePath
// /dev/termination-log, terminationMessagePolicy File, port protocol TCP (and
// hostPort = containerPort under hostNetwork), probe timings (timeout 1s,
// period 10s, success 1, failure 3; HTTP GET path "/" and scheme HTTP) and
// fieldRef apiVersion v1. Fields already set are left alone.
func ApplyDefaults(pod *corev1.Pod) {
	spec := &pod.Spec
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.TerminationGracePeriodSeconds == nil {
		g := DefaultTerminationGracePeriodSeconds
		spec.TerminationGracePeriodSeconds = &g
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = DefaultSchedulerName
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
}

func defaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = DefaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = "/"
		}
		if h.Scheme == "" {
			h.Scheme = corev1.URISchemeHTTP
		}
	}
}

// defaultPullPolicy is Always when the image's tag is "latest", or when it has
// neither tag nor digest (the runtime then pulls "latest"); IfNotPresent
// otherwise.
func defaultPullPolicy(image string) corev1.PullPolicy {
	name, digested := image, false
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name, digested = name[:i], true
	}
	tag := ""
	// A ':' before the last '/' belongs to a registry host:port, not a tag.
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		tag = name[i+1:]
	}
	if tag == "latest" || (tag == "" && !digested) {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
