package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestContainerdLogRotation: a container's log past --container-log-max-size
// is rotated (renamed, containerd reopens it, older files gzipped), at most
// --container-log-max-files files are kept, and the container goes on
// logging into the new file.
func TestContainerdLogRotation(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-logs")
	writeManifest(t, d.manifests, "chatty.yaml", e.manifest(podSpec{name: "chatty", containers: []containerSpec{
		{name: "app", args: []string{"-print-every", "5ms"}},
	}}))
	n := startNode(t, e.endpoint, d, "--container-log-max-size", "4Ki", "--container-log-max-files", "3",
		"--container-log-monitor-interval", "3s")
	var p corev1.Pod
	waitFor(t, "chatty Running", func() (bool, string) {
		p = n.pods(t)["default/chatty-"+d.name]
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	dir := filepath.Join(d.logs, fmt.Sprintf("default_chatty-%s_%s", d.name, p.UID), "app")
	waitFor(t, "rotated and gzipped logs, at most 3 files", func() (bool, string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false, err.Error()
		}
		var names []string
		gz, rotated := 0, 0
		for _, en := range entries {
			names = append(names, en.Name())
			switch {
			case strings.HasSuffix(en.Name(), ".gz"):
				gz++
			case strings.HasPrefix(en.Name(), "0.log."):
				rotated++
			}
		}
		return gz >= 1 && rotated >= 1 && len(entries) <= 3, strings.Join(names, " ")
	})
	// Still logging into the reopened file.
	waitFor(t, "lines in the current log after the rotation", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(dir, "0.log"))
		return err == nil && strings.Contains(string(b), " stdout F line "), fmt.Sprint(len(b), err)
	})
}
