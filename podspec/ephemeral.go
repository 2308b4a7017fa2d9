package podspec

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SpecContainer returns the pod's app, init or ephemeral container name,
// an ephemeral one as a Container (the same fields, as the kubelet converts
// it), and whether it is ephemeral; nil when the pod has no such container.
func SpecContainer(pod *corev1.Pod, name string) (c *corev1.Container, ephemeral bool) {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i], false
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if ec := &pod.Spec.EphemeralContainers[i]; ec.Name == name {
			return (*corev1.Container)(&ec.EphemeralContainerCommon), true
		}
	}
	return nil, false
}

// TargetPIDNamespace makes cfg, the config of an ephemeral container with a
// targetContainerName, join the PID namespace of that container, whose
// runtime ID is targetID (NamespaceMode_TARGET), as the kubelet does. Only a
// container that would have a PID namespace of its own is moved: in a pod
// that shares its process namespace, or the host's, it keeps that one.
// An empty targetID changes nothing.
func TargetPIDNamespace(cfg *runtimeapi.ContainerConfig, targetID string) {
	if targetID == "" {
		return
	}
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns == nil || ns.Pid != runtimeapi.NamespaceMode_CONTAINER {
		return
	}
	ns.Pid, ns.TargetId = runtimeapi.NamespaceMode_TARGET, targetID
}
