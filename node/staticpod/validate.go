package staticpod

import (
	"fmt"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	validRestartPolicies = []string{
		string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever),
	}
	validPullPolicies = []string{
		string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever),
	}
	validProtocols = []string{
		string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP),
	}
	validTerminationMessagePolicies = []string{
		string(corev1.TerminationMessageReadFile), string(corev1.TerminationMessageFallbackToLogsOnError),
	}
)

// Validate checks the parts of a (defaulted) pod that actorlet depends on and
// returns every problem found, each naming its field:
//
//   - metadata.name is required and a DNS-1123 subdomain; metadata.namespace
//     is required and a DNS-1123 label;
//   - spec.containers is not empty; container names (init and app together)
//     are unique DNS-1123 labels; image is set without surrounding
//     whitespace; imagePullPolicy and terminationMessagePolicy are set and
//     known; container restartPolicy, if set, is known;
//   - ports: containerPort in 1..65535, hostPort 0 or in 1..65535, protocol
//     set and known, names valid IANA service names and unique per container;
//   - resources: no negative quantity, and requests <= limits for every
//     resource that has both;
//   - spec.restartPolicy is set and known; terminationGracePeriodSeconds, if
//     set, is >= 0.
//
// Validate does not apply defaults; call ApplyDefaults first for a pod that
// did not come from the API server. It is shared by all pod sources.
func Validate(pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if pod.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(pod.Name) {
			errs = append(errs, field.Invalid(meta.Child("name"), pod.Name, msg))
		}
	}
	// Keys and total size (256 KiB) as the API server checks them.
	errs = append(errs, apivalidation.ValidateAnnotations(pod.Annotations, meta.Child("annotations"))...)
	if pod.Namespace == "" {
		errs = append(errs, field.Required(meta.Child("namespace"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(pod.Namespace) {
			errs = append(errs, field.Invalid(meta.Child("namespace"), pod.Namespace, msg))
		}
	}

	spec := field.NewPath("spec")
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("containers"), "must have at least one container"))
	}
	names := sets.New[string]()
	for i := range pod.Spec.InitContainers {
		errs = append(errs, validateContainer(&pod.Spec.InitContainers[i], spec.Child("initContainers").Index(i), names)...)
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, validateContainer(&pod.Spec.Containers[i], spec.Child("containers").Index(i), names)...)
	}

	errs = append(errs, validateEnum(spec.Child("restartPolicy"), string(pod.Spec.RestartPolicy), validRestartPolicies)...)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(spec.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	return errs
}

func validateContainer(c *corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case names.Has(c.Name):
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
		}
	}
	names.Insert(c.Name)

	switch {
	case strings.TrimSpace(c.Image) == "":
		errs = append(errs, field.Required(path.Child("image"), ""))
	case strings.TrimSpace(c.Image) != c.Image:
		errs = append(errs, field.Invalid(path.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, validateEnum(path.Child("imagePullPolicy"), string(c.ImagePullPolicy), validPullPolicies)...)
	errs = append(errs, validateEnum(path.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy), validTerminationMessagePolicies)...)
	if c.RestartPolicy != nil {
		errs = append(errs, validateEnum(path.Child("restartPolicy"), string(*c.RestartPolicy), validRestartPolicies)...)
	}
	errs = append(errs, validatePorts(c.Ports, path.Child("ports"))...)
	errs = append(errs, validateResources(c.Resources, path.Child("resources"))...)
	return errs
}

func validatePorts(ports []corev1.ContainerPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	portNames := sets.New[string]()
	for i, p := range ports {
		pp := path.Index(i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
			}
			if portNames.Has(p.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			portNames.Insert(p.Name)
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), p.HostPort, msg))
			}
		}
		errs = append(errs, validateEnum(pp.Child("protocol"), string(p.Protocol), validProtocols)...)
	}
	return errs
}

func validateResources(r corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range sortedResourceNames(list.rl) {
			q := list.rl[name]
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range sortedResourceNames(r.Requests) {
		req := r.Requests[name]
		lim, ok := r.Limits[name]
		if ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func sortedResourceNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for n := range rl {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// validateEnum requires value to be set and one of valid.
func validateEnum(path *field.Path, value string, valid []string) field.ErrorList {
	switch {
	case value == "":
		return field.ErrorList{field.Required(path, "")}
	case !slices.Contains(valid, value):
		return field.ErrorList{field.NotSupported(path, value, valid)}
	}
	return nil
}
