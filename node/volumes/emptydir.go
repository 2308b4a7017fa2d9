package volumes

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// setUpEmptyDir makes an emptyDir: a 0777 directory on disk, or on a new
// tmpfs for medium Memory (sized sizeLimit when set). A directory on disk
// is not limited to sizeLimit.
func (m *Manager) setUpEmptyDir(ctx context.Context, podUID, name string, ed *corev1.EmptyDirVolumeSource) (string, error) {
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
	return dir, os.Chmod(dir, emptyDirMode)
}
