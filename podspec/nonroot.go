package podspec

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ErrRunAsNonRoot is the kind of the errors VerifyRunAsNonRoot returns: the
// container's configuration, not the runtime, is at fault (the kubelet's
// CreateContainerConfigError).
var ErrRunAsNonRoot = errors.New("runAsNonRoot")

// VerifyRunAsNonRoot checks container c of pod against runAsNonRoot (the
// container's own, else the pod's), as the kubelet does before creating a
// container: with it set, the user the container will run as must be known
// not to be root. That user is the effective runAsUser when there is one,
// else the image's (imageUID as the runtime reports it, or imageUser when
// the image names its user instead of a number; neither: the image declares
// no user and runs as root, as the kubelet takes it). The
// messages are the kubelet's, with the pod as name_namespace(uid).
func VerifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, imageUID *int64, imageUser string) error {
	nonRoot, runAsUser := effectiveNonRoot(pod, c)
	if !nonRoot {
		return nil
	}
	who := fmt.Sprintf("(pod: %q, container: %s)", fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID), c.Name)
	switch {
	case runAsUser != nil && *runAsUser == 0:
		return nonRootError("container's runAsUser breaks non-root policy " + who)
	case runAsUser != nil:
		return nil
	case imageUID == nil && imageUser == "", imageUID != nil && *imageUID == 0:
		// An image that declares no user runs as root.
		return nonRootError("container has runAsNonRoot and image will run as root " + who)
	case imageUID == nil && imageUser != "":
		return nonRootError(fmt.Sprintf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s",
			imageUser, who))
	}
	return nil
}

// nonRootError is a refusal of VerifyRunAsNonRoot: its text is the
// kubelet's message alone (the container's status shows it), its kind
// ErrRunAsNonRoot.
type nonRootError string

func (e nonRootError) Error() string { return string(e) }
func (e nonRootError) Unwrap() error { return ErrRunAsNonRoot }

// NeedsImageUser reports whether VerifyRunAsNonRoot needs the image's user
// for c: it asks for runAsNonRoot and sets no runAsUser (nor does the pod).
func NeedsImageUser(pod *corev1.Pod, c *corev1.Container) bool {
	nonRoot, runAsUser := effectiveNonRoot(pod, c)
	return nonRoot && runAsUser == nil
}

// effectiveNonRoot is the container's runAsNonRoot and runAsUser, each the
// container's own if set, else the pod's.
func effectiveNonRoot(pod *corev1.Pod, c *corev1.Container) (nonRoot bool, runAsUser *int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsNonRoot != nil {
			nonRoot = *psc.RunAsNonRoot
		}
		runAsUser = psc.RunAsUser
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsNonRoot != nil {
			nonRoot = *csc.RunAsNonRoot
		}
		if csc.RunAsUser != nil {
			runAsUser = csc.RunAsUser
		}
	}
	return nonRoot, runAsUser
}
