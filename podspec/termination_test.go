package podspec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTerminationMessageFile(t *testing.T) {
	podDir := filepath.Join(t.TempDir(), "pods", "u1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	c := &corev1.Container{Name: "app"}
	host, m, err := TerminationMessageFile(podDir, pod, c, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(podDir, "termination.app.3"); host != want {
		t.Errorf("host path = %q, want %q", host, want)
	}
	fi, err := os.Stat(host)
	if err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o666 {
		t.Errorf("file = %v, %v; want an empty 0666 file", fi, err)
	}
	if m.ContainerPath != DefaultTerminationMessagePath || m.HostPath != host || m.Readonly {
		t.Errorf("mount = %v", m)
	}

	// Called again for the same attempt: the same file, not truncated.
	if err := os.WriteFile(host, []byte("bye"), 0o666); err != nil {
		t.Fatal(err)
	}
	c.TerminationMessagePath = "/tmp/why"
	host2, m, err := TerminationMessageFile(podDir, pod, c, 3)
	if err != nil || host2 != host || m.ContainerPath != "/tmp/why" {
		t.Fatalf("= %q, %v, %v", host2, m, err)
	}
	if b, _ := os.ReadFile(host); string(b) != "bye" {
		t.Errorf("file truncated: %q", b)
	}
	if _, _, err := TerminationMessageFile("", pod, c, 1); err == nil {
		t.Error("no pod dir: no error")
	}
}

// A new pod's container makes three inodes: the pod directory, its
// termination-message file and the pod's /etc/hosts (where the kubelet's
// layout, <podDir>/containers/<name>/<id>, makes five).
func TestNewPodFilesAreThreeInodes(t *testing.T) {
	podDir := filepath.Join(t.TempDir(), "pods", "u1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	c := &corev1.Container{Name: "app"}
	if _, _, err := TerminationMessageFile(podDir, pod, c, 1); err != nil {
		t.Fatal(err)
	}
	read := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	if _, err := EtcHostsMount(podDir, pod, c, "10.88.0.5", "", read); err != nil {
		t.Fatal(err)
	}
	var made []string
	err := filepath.WalkDir(podDir, func(path string, _ os.DirEntry, err error) error {
		made = append(made, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{podDir, filepath.Join(podDir, "etc-hosts"), filepath.Join(podDir, "termination.app.1")}
	if !slices.Equal(made, want) {
		t.Errorf("a new pod's container made %q, want %q", made, want)
	}
}
