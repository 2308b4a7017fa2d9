package volumes

import (
	"math"
	"os"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/actorlet/actorlet/podspec"
)

// downwardAPIPayload adds the files of downward API items to into.
func (m *Manager) downwardAPIPayload(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode os.FileMode, into payload) error {
	for _, it := range items {
		var (
			v   string
			err error
		)
		switch {
		case it.FieldRef != nil:
			v, err = fieldPathValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = m.resourceValue(pod, it.ResourceFieldRef)
		default:
			err = errorf(ErrInvalid, "downward API item %q has neither fieldRef nor resourceFieldRef", it.Path)
		}
		if err != nil {
			return err
		}
		into[it.Path] = file{data: []byte(v), mode: modeOr(it.Mode, mode)}
	}
	return nil
}

// fieldPathValue is the value of a downward API volume fieldRef: one of
// the pod's metadata fields (podspec.PodMetadataField, the same values as
// environment variables get).
func fieldPathValue(pod *corev1.Pod, path string) (string, error) {
	if v, ok := podspec.PodMetadataField(pod, path); ok {
		return v, nil
	}
	return "", errorf(ErrInvalid, "unsupported fieldPath: %s", path)
}

// resourceValue is the value of a downward API volume resourceFieldRef:
// the named container's request or limit divided by the divisor (default
// 1), rounded up. A cpu, memory or ephemeral-storage limit the container
// does not set is the node's allocatable, as the kubelet has it.
func (m *Manager) resourceValue(pod *corev1.Pod, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName == "" {
		return "", errorf(ErrInvalid, "resourceFieldRef %s: containerName is required in a volume", ref.Resource)
	}
	c := findContainer(pod, ref.ContainerName)
	if c == nil {
		return "", errorf(ErrNotFound, "container %s not found", ref.ContainerName)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	res := corev1.ResourceName(name)
	hugePages := strings.HasPrefix(name, corev1.ResourceHugePagesPrefix)
	if !ok || (kind != "limits" && kind != "requests") ||
		(res != corev1.ResourceCPU && res != corev1.ResourceMemory && res != corev1.ResourceEphemeralStorage && !hugePages) {
		return "", errorf(ErrInvalid, "unsupported container resource: %v", ref.Resource)
	}
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else {
		q = c.Resources.Limits[res]
		if q.IsZero() && !hugePages {
			q = m.allocatable[res]
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == corev1.ResourceCPU {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
