package cri

// Labels that actorlet puts on every sandbox and container it creates.
//
// The io.kubernetes.* keys are the ones the upstream kubelet uses, so tools such as crictl show
// actorlet's objects the way they show the kubelet's. LabelManaged marks ownership: an object
// without LabelManaged=ManagedValue is never treated as actorlet's, whatever its other labels say.
// In particular it is never listed by ListPods/ListPod and so never removed as an orphan: other
// tenants of the same runtime (another kubelet, nerdctl, buildkit) are left alone.
const (
	// LabelPodUID holds the UID of the pod an object belongs to.
	LabelPodUID = "io.kubernetes.pod.uid"
	// LabelPodName holds the name of the pod an object belongs to.
	LabelPodName = "io.kubernetes.pod.name"
	// LabelPodNamespace holds the namespace of the pod an object belongs to.
	LabelPodNamespace = "io.kubernetes.pod.namespace"
	// LabelContainerName holds the name of the container in the pod spec.
	LabelContainerName = "io.kubernetes.container.name"
	// LabelManaged marks objects created by actorlet. Its value is always ManagedValue.
	LabelManaged = "io.actorlet.managed"
	// ManagedValue is the value of LabelManaged.
	ManagedValue = "true"
	// AnnotationRestartCount holds a container's restart count when it was
	// created (the kubelet's annotation of the same name), so that a pod whose
	// journal is lost gets its restart counts back from the runtime.
	AnnotationRestartCount = "io.kubernetes.container.restartCount"
)

// managedSelector returns the label selector for actorlet's objects, narrowed to one pod when
// podUID is not empty.
func managedSelector(podUID string) map[string]string {
	sel := map[string]string{LabelManaged: ManagedValue}
	if podUID != "" {
		sel[LabelPodUID] = podUID
	}
	return sel
}

// isManaged reports whether labels carry actorlet's ownership mark.
func isManaged(labels map[string]string) bool {
	return labels[LabelManaged] == ManagedValue
}
