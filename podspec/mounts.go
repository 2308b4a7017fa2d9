package podspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrInvalidVolumeMount is the kind of a volumeMount that cannot be
// mounted as written: it names a volume the pod lacks, has a subPath that
// or subPathExpr that is absolute or escapes its volume, a subPathExpr that
// refers to a variable the container's environment lacks, or asks for
// Bidirectional propagation in an unprivileged container. Retrying cannot
// help; the pod spec must change.
var ErrInvalidVolumeMount = errors.New("invalid volume mount")

// ContainerMounts builds the CRI mounts of a container's volumeMounts, in
// their order, from the host paths of the pod's volumes (volumes.Paths,
// by volume name), as the kubelet's makeMounts does:
//
//   - readOnly as asked; configMap, secret, downwardAPI and projected
//     volumes are always read-only (the kubelet's volume plugins say so).
//     recursiveReadOnly Enabled asks the runtime for a recursive read-only
//     mount (readOnly and no propagation required); IfPossible is a plain
//     read-only mount.
//   - subPath mounts the path under the volume; it must be relative and
//     must not go up (".."), and once symlinks are resolved it must still
//     be inside the volume. A missing subPath is created as a directory
//     (with the volume directory's mode, setgid and sticky bits included,
//     so in a volume given an fsGroup it has that group), each component
//     checked not to leave the volume, as the kubelet does. The host path given to the
//     runtime is the resolved one; so, as in the kubelet, a subPath of a
//     configMap or secret volume does not see later updates.
//   - subPathExpr is expanded from the container's environment env (its
//     $(VAR) references, $$ an escaped $, as the kubelet's
//     ExpandContainerVolumeMounts does) and then taken as a subPath, with
//     the same rules. A reference to a variable env lacks or holds empty
//     is an error naming it ("missing value for ..."), as in the kubelet.
//   - mountPropagation: None (or unset) is private, HostToContainer is
//     rslave, Bidirectional is rshared and needs a privileged container.
//
// The termination-message mount is not among them (TerminationMessageFile).
// Errors name the container and the volumeMount; those of the spec are
// ErrInvalidVolumeMount, others are I/O errors of making the subPath.
func ContainerMounts(pod *corev1.Pod, c *corev1.Container, paths map[string]string, env Env) ([]*runtimeapi.Mount, error) {
	volumes := make(map[string]*corev1.Volume, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		volumes[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	mounts := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts))
	for i := range c.VolumeMounts {
		vm := &c.VolumeMounts[i]
		m, err := containerMount(c, vm, volumes[vm.Name], paths, env)
		if err != nil {
			return nil, fmt.Errorf("container %q: volumeMount %q at %s: %w", c.Name, vm.Name, vm.MountPath, err)
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}

func containerMount(c *corev1.Container, vm *corev1.VolumeMount, vol *corev1.Volume, paths map[string]string, env Env) (*runtimeapi.Mount, error) {
	if vol == nil {
		return nil, mountErrorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
	}
	host, ok := paths[vm.Name]
	if !ok || host == "" {
		return nil, fmt.Errorf("volume %q is not set up", vm.Name)
	}
	subPath := vm.SubPath
	if vm.SubPathExpr != "" {
		var err error
		if subPath, err = expandSubPathExpr(vm.SubPathExpr, env); err != nil {
			return nil, err
		}
	}
	if subPath != "" {
		var err error
		if host, err = subPathHost(host, subPath); err != nil {
			if vm.SubPathExpr != "" {
				return nil, fmt.Errorf("subPathExpr %q: %w", vm.SubPathExpr, err)
			}
			return nil, err
		}
	}
	prop, err := mountPropagation(c, vm.MountPropagation)
	if err != nil {
		return nil, err
	}
	m := &runtimeapi.Mount{
		ContainerPath: vm.MountPath,
		HostPath:      host,
		Readonly:      vm.ReadOnly || alwaysReadOnly(vol),
		Propagation:   prop,
	}
	if vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
		if !vm.ReadOnly || prop != runtimeapi.MountPropagation_PROPAGATION_PRIVATE {
			return nil, mountErrorf("recursiveReadOnly Enabled needs readOnly and mountPropagation None")
		}
		m.RecursiveReadOnly = true
	}
	return m, nil
}

// expandSubPathExpr expands a volumeMount's subPathExpr from the
// container's environment, as the kubelet's ExpandContainerVolumeMounts:
// every $(VAR) must name a variable of env with a non-empty value; the
// missing ones are named, sorted, in the error. The result is checked as a
// subPath by the caller (relative, no "..").
func expandSubPathExpr(expr string, env Env) (string, error) {
	vars := env.Map()
	missing := map[string]string{}
	out := expand(expr, func(name string) (string, bool) {
		v, ok := vars[name]
		if !ok || v == "" {
			missing[name] = ""
			return "", true
		}
		return v, true
	})
	if len(missing) > 0 {
		return "", mountErrorf("subPathExpr %q: missing value for %s", expr, strings.Join(sortedKeys(missing), ", "))
	}
	return out, nil
}

// mountError is an ErrInvalidVolumeMount with its own message.
type mountError struct{ msg string }

func (e *mountError) Error() string        { return e.msg }
func (e *mountError) Is(target error) bool { return target == ErrInvalidVolumeMount }

func mountErrorf(format string, args ...any) error {
	return &mountError{msg: fmt.Sprintf(format, args...)}
}

// alwaysReadOnly: the volume types whose files the node writes, and CSI
// volumes that say readOnly.
func alwaysReadOnly(v *corev1.Volume) bool {
	s := &v.VolumeSource
	return s.ConfigMap != nil || s.Secret != nil || s.DownwardAPI != nil || s.Projected != nil ||
		(s.CSI != nil && s.CSI.ReadOnly != nil && *s.CSI.ReadOnly) // as the kubelet's CSI mounter's attributes say
}

func mountPropagation(c *corev1.Container, p *corev1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	if p == nil {
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	}
	switch *p {
	case corev1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case corev1.MountPropagationBidirectional:
		if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
			return 0, mountErrorf("Bidirectional mount propagation is available only to privileged containers")
		}
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, mountErrorf("invalid mount propagation mode %q", *p)
}

// subPathHost is the host path of subPath under the volume at volPath,
// symlinks resolved, creating missing directories.
func subPathHost(volPath, subPath string) (string, error) {
	if filepath.IsAbs(subPath) {
		return "", mountErrorf("subPath %q must be a relative path", subPath)
	}
	for _, el := range strings.Split(subPath, "/") {
		if el == ".." {
			return "", mountErrorf("subPath %q must not contain '..'", subPath)
		}
	}
	root, err := filepath.EvalSymlinks(volPath)
	if err != nil {
		return "", fmt.Errorf("resolve volume path: %w", err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		if filepath.Clean(subPath) == "." {
			return root, nil
		}
		return "", mountErrorf("subPath %q: the volume is not a directory", subPath)
	}
	// The volume directory's permissions with its setgid and sticky bits,
	// as the kubelet's SafeMakeDir gives them: in a volume with an
	// fsGroup (setgid), a new directory has its group (the kernel's
	// inheritance) and keeps passing it on.
	perm := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
	cur := root
	for _, el := range strings.Split(filepath.Clean(subPath), "/") {
		if el == "." {
			continue
		}
		next := filepath.Join(cur, el)
		_, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(next, perm); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("create subPath %q: %w", subPath, err)
			} else if err == nil {
				if err := os.Chmod(next, perm); err != nil {
					return "", err
				}
			}
		} else if err != nil {
			return "", err
		}
		if next, err = filepath.EvalSymlinks(next); err != nil {
			return "", fmt.Errorf("resolve subPath %q: %w", subPath, err)
		}
		if !within(root, next) {
			return "", mountErrorf("subPath %q escapes its volume", subPath)
		}
		cur = next
	}
	return cur, nil
}

// within reports whether path is root or under it (both clean, absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
