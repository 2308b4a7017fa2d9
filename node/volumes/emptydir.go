package volumes

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// setUpEmptyDir makes an emptyDir and, when the pod has an fsGroup, gives
// it that group (see setVolumeOwnership and the package doc, "fsGroup").
func (m *Manager) setUpEmptyDir(ctx context.Context, log *zap.Logger, pod *corev1.Pod, name string, ed *corev1.EmptyDirVolumeSource) (string, error) {
	dir, err := m.makeEmptyDir(ctx, string(pod.UID), name, ed)
	if err != nil {
		return "", err
	}
	if gid := podFSGroup(pod); gid != nil && !fsGroupApplied(dir, *gid, false) {
		// Once: a root with the group and bits was walked in full (the
		// root is changed last), so a later SetUp, or fsGroupChangePolicy
		// OnRootMismatch, finds nothing to do; as the kubelet, which
		// changes an emptyDir when it makes it, whatever the policy.
		if err := setVolumeOwnership(dir, *gid, false); err != nil {
			// As the kubelet: logged, the volume is used as it is.
			log.Warn("Could not give the emptyDir its fsGroup", zap.Int64("fsGroup", *gid), zap.Error(err))
		}
	}
	return dir, nil
}

// makeEmptyDir makes an emptyDir: a 0777 directory on disk, or on a new
// tmpfs for medium Memory (sized sizeLimit when set), whose root is 1777
// as the kernel makes a tmpfs's root and the kubelet leaves it. A
// directory on disk is not limited to sizeLimit.
func (m *Manager) makeEmptyDir(ctx context.Context, podUID, name string, ed *corev1.EmptyDirVolumeSource) (string, error) {
	dir := m.volumeDir(podUID, pluginEmptyDir, name)
	switch ed.Medium {
	case corev1.StorageMediumDefault:
		return dir, m.makeDir(dir, emptyDirMode)
	case corev1.StorageMediumMemory:
	default:
		return "", errorf(ErrUnsupported, "emptyDir medium %q is not supported", ed.Medium)
	}
	if err := m.makeDir(dir, emptyDirMode); err != nil {
		return "", err
	}
	mounted, err := m.mounter.IsMountPoint(ctx, dir)
	if err != nil {
		return "", err
	}
	if mounted {
		return dir, nil
	}
	var size int64
	if ed.SizeLimit != nil {
		size = ed.SizeLimit.Value()
	}
	if err := m.mounter.MountTmpfs(ctx, dir, size); err != nil {
		return "", fmt.Errorf("mount tmpfs for emptyDir medium Memory: %w", err)
	}
	return dir, os.Chmod(dir, emptyDirMode|os.ModeSticky)
}
