package podspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
)

// PodCgroupParent is the cgroup a pod's sandbox and containers go under
// with the cgroupfs driver and cgroups per QoS, as the kubelet lays them
// out: <root>/kubepods/pod<uid> for Guaranteed pods,
// <root>/kubepods/burstable/pod<uid> and <root>/kubepods/besteffort/pod<uid>
// for the others.
func PodCgroupParent(root string, pod *corev1.Pod) string {
	if root == "" {
		root = "/"
	}
	qos := ""
	switch lifecycle.QOSClass(pod) {
	case corev1.PodQOSBurstable:
		qos = "burstable"
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	}
	return path.Join(root, "kubepods", qos, "pod"+string(pod.UID))
}

// cgroupFS is the cgroup file system root (a variable for tests).
var cgroupFS = "/sys/fs/cgroup"

// RemovePodCgroup removes the pod's cgroup directory (parent, as
// PodCgroupParent made it) in every hierarchy: cgroup v2's one, or each v1
// controller's. The runtime removes its containers' cgroups; a pod cgroup
// that still has children or tasks is left and reported. Missing is fine.
func RemovePodCgroup(parent string) error {
	dirs := []string{filepath.Join(cgroupFS, parent)}
	if _, err := os.Stat(filepath.Join(cgroupFS, "cgroup.controllers")); err != nil {
		// cgroup v1: one hierarchy per controller.
		entries, err := os.ReadDir(cgroupFS)
		if err != nil {
			return fmt.Errorf("cgroups of %s: %w", parent, err)
		}
		dirs = dirs[:0]
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(cgroupFS, e.Name(), parent))
			}
		}
	}
	var errs []error
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
