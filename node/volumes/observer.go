package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// OperationObserver is told how long each volume operation took and whether
// it failed, for the kubelet's storage_operation_duration_seconds. plugin is
// the kubelet's plugin name ("kubernetes.io/empty-dir",
// "kubernetes.io/csi:<driver>", ...), operation "volume_mount" (one
// volume's set-up) or "volume_unmount" (one plugin's volumes of a pod torn
// down). It is called synchronously: it must be quick and safe for
// concurrent use.
type OperationObserver interface {
	VolumeOperation(plugin, operation string, took time.Duration, err error)
}

// The operation names, as the kubelet's operation executor gives them.
const (
	OperationMount   = "volume_mount"
	OperationUnmount = "volume_unmount"
)

// pluginName is the kubelet's plugin name of v's source, "" for a source
// this package does not serve.
func pluginName(v *corev1.Volume) string {
	switch s := &v.VolumeSource; {
	case s.EmptyDir != nil:
		return dirPluginName(pluginEmptyDir)
	case s.HostPath != nil:
		return "kubernetes.io/host-path"
	case s.CSI != nil:
		return "kubernetes.io/csi:" + s.CSI.Driver
	}
	if p, _, ok := dataPlugin(v); ok {
		return dirPluginName(p)
	}
	return ""
}

// dirPluginName is the plugin name of a plugin's directory under a pod's
// volumes ("kubernetes.io~secret" is "kubernetes.io/secret").
func dirPluginName(dir string) string {
	return strings.Replace(dir, "~", "/", 1)
}

// observe tells the observer, if there is one, how the operation went.
func (m *Manager) observe(plugin, operation string, start time.Time, err error) {
	if m.observer != nil && plugin != "" {
		m.observer.VolumeOperation(plugin, operation, m.clock.Since(start), err)
	}
}

// hasPluginDir tells whether the pod has a directory of the plugin.
func (m *Manager) hasPluginDir(podUID, plugin string) bool {
	_, err := os.Lstat(filepath.Join(m.PodDir(podUID), "volumes", plugin))
	return err == nil
}
