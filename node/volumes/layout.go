package volumes

import (
	"path/filepath"
	"strings"
)

// The kubelet's plugin directory names.
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginSecret      = "kubernetes.io~secret"
	pluginProjected   = "kubernetes.io~projected"
	pluginDownwardAPI = "kubernetes.io~downward-api"
)

// Directory modes (the kubelet's, whatever the umask).
const (
	// dirMode is the mode of the pod directory and the directories above
	// the volumes.
	dirMode = 0o750
	// emptyDirMode lets any user of any container write an emptyDir.
	emptyDirMode = 0o777
	// dataDirMode is the mode of a configMap, secret, downwardAPI or
	// projected volume, which containers mount read-only.
	dataDirMode = 0o755
)

// PodDir is the directory of a pod: <root>/pods/<podUID>. Package actors
// puts termination-message files under it; TearDown removes it.
func (m *Manager) PodDir(podUID string) string {
	return filepath.Join(m.podsDir(), podUID)
}

func (m *Manager) podsDir() string { return filepath.Join(m.root, "pods") }

func (m *Manager) volumeDir(podUID, plugin, name string) string {
	return filepath.Join(m.PodDir(podUID), "volumes", plugin, name)
}

// validName reports whether s can be one path element: a pod UID or a
// volume name never names a parent or a subdirectory.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}
