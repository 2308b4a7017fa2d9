package probe

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Target is the container a probe or hook is about.
type Target struct {
	Pod         *corev1.Pod
	Container   *corev1.Container // for named ports; may be nil
	ContainerID string            // CRI ID, for exec
	// PodIP is the default host of network probes. If empty, a
	// hostNetwork pod is probed on 127.0.0.1; any other pod fails its
	// network probes.
	PodIP string
	// Kind is the probe's kind, set by the Manager for its workers (a
	// Prober may count by it); Startup, the zero value, for hooks.
	Kind Kind
}

// loopbackHost is where a hostNetwork pod without a known IP is probed.
const loopbackHost = "127.0.0.1"

// host is explicit if set, else the pod's address.
func (t Target) host(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if t.PodIP != "" {
		return t.PodIP, nil
	}
	if t.Pod != nil && t.Pod.Spec.HostNetwork {
		return loopbackHost, nil
	}
	return "", errors.New("pod has no IP to probe")
}

// port resolves a port number or a name of one of the container's ports
// (a numeric string is taken as a number), as the kubelet does.
func (t Target) port(p intstr.IntOrString) (int, error) {
	n := 0
	if p.Type == intstr.Int {
		n = p.IntValue()
	} else {
		found := false
		if t.Container != nil {
			for _, cp := range t.Container.Ports {
				if cp.Name == p.StrVal {
					n, found = int(cp.ContainerPort), true
					break
				}
			}
		}
		if !found {
			var err error
			if n, err = strconv.Atoi(p.StrVal); err != nil {
				return 0, fmt.Errorf("couldn't find port %q in the ports of container %q", p.StrVal, t.name())
			}
		}
	}
	if n <= 0 || n > 65535 {
		return 0, fmt.Errorf("invalid port number %d", n)
	}
	return n, nil
}

func (t Target) name() string {
	if t.Container == nil {
		return ""
	}
	return t.Container.Name
}
