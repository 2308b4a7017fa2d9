package podspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEtcHosts(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.PodSpec{
		Hostname: "h", Subdomain: "sub",
		HostAliases: []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"db", "db.local"}}},
	}}
	want := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
		"10.88.0.5\th.sub.ns.svc.cluster.local\th\n\n# Entries added by HostAliases.\n10.1.2.3\tdb\tdb.local\n"
	if got := string(EtcHosts(pod, []string{"10.88.0.5"}, "cluster.local", nil)); got != want {
		t.Errorf("pod network:\n%s\nwant\n%s", got, want)
	}
	pod.Spec.HostNetwork = true
	want = "127.0.0.1 localhost myhost\n\n# Entries added by HostAliases.\n10.1.2.3\tdb\tdb.local\n"
	if got := string(EtcHosts(pod, []string{"192.168.1.2"}, "cluster.local", []byte("127.0.0.1 localhost myhost"))); got != want {
		t.Errorf("host network:\n%q\nwant\n%q", got, want)
	}
}

func TestEtcHostsMount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pods", "u1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	c := &corev1.Container{Name: "app"}
	read := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	if m, err := EtcHostsMount(dir, pod, c, "", "", read); m != nil || err != nil {
		t.Fatalf("no pod IP yet: %v, %v; want none", m, err)
	}
	m, err := EtcHostsMount(dir, pod, c, "10.88.0.5", "", read)
	if err != nil || m == nil || m.ContainerPath != "/etc/hosts" || m.HostPath != filepath.Join(dir, "etc-hosts") {
		t.Fatalf("mount %v, %v", m, err)
	}
	if b, err := os.ReadFile(m.HostPath); err != nil || !strings.Contains(string(b), "10.88.0.5\tweb\n") {
		t.Fatalf("file %q, %v", b, err)
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "own", MountPath: "/etc/hosts"}}
	if m, _ := EtcHostsMount(dir, pod, c, "10.88.0.5", "", read); m != nil {
		t.Fatalf("a container mounting /etc/hosts itself got %v", m)
	}
	pod.Spec.HostNetwork = true
	c.VolumeMounts = nil
	if _, err := EtcHostsMount(dir, pod, c, "10.0.0.1", "", read); err == nil {
		t.Fatal("hostNetwork without a readable host /etc/hosts: no error")
	}
}

// The hosts file is written in place when new, kept when a later container
// of the pod would write the same, and replaced by a rename when it
// differs (another IP, a write cut short).
func TestEtcHostsMountRewrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pods", "u1")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	c := &corev1.Container{Name: "app"}
	read := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	mount := func(ip string) (string, os.FileInfo) {
		t.Helper()
		m, err := EtcHostsMount(dir, pod, c, ip, "", read)
		if err != nil || m == nil {
			t.Fatalf("EtcHostsMount(%s) = %v, %v", ip, m, err)
		}
		b, err := os.ReadFile(m.HostPath)
		if err != nil {
			t.Fatal(err)
		}
		if want := string(EtcHosts(pod, []string{ip}, "", nil)); string(b) != want {
			t.Fatalf("file %q, want %q", b, want)
		}
		fi, err := os.Stat(m.HostPath)
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("file mode %v, %v; want 0644", fi, err)
		}
		return m.HostPath, fi
	}
	path, first := mount("10.88.0.5")
	if _, again := mount("10.88.0.5"); !os.SameFile(first, again) {
		t.Error("the same contents were written again to a new file")
	}
	if _, other := mount("10.88.0.6"); os.SameFile(first, other) {
		t.Error("other contents were written in place, not renamed over the file")
	}
	if err := os.WriteFile(path, []byte("# Kubernetes-managed"), 0o644); err != nil {
		t.Fatal(err)
	}
	mount("10.88.0.6")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	mount("10.88.0.6")
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("pod dir holds %d entries, want etc-hosts alone: %v", len(entries), entries)
	}
}
