package podspec

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// hostResolvConf is the node's resolv.conf in these tests.
const hostResolvConf = `# generated
nameserver 192.168.0.1
nameserver 192.168.0.2
search old.example
search corp.example. lab.example .
options timeout:2 attempts:3
options timeout:1
`

// files serves testdata strings by path, as a ReadFileFunc.
func files(m map[string]string) ReadFileFunc {
	return func(path string) ([]byte, error) {
		if s, ok := m[path]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
	}
}

func TestPodDNSConfig(t *testing.T) {
	five, two := "5", "2"
	opts := Options{
		ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		ResolvConf: "/etc/resolv.conf", ReadFile: files(map[string]string{"/etc/resolv.conf": hostResolvConf}),
	}
	host := &runtimeapi.DNSConfig{
		Servers:  []string{"192.168.0.1", "192.168.0.2"},
		Searches: []string{"corp.example", "lab.example"},
		Options:  []string{"timeout:1", "attempts:3"},
	}
	cluster := &runtimeapi.DNSConfig{
		Servers:  []string{"10.96.0.10"},
		Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"},
		Options:  []string{"ndots:5"},
	}
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%d.example", prefix, i))
		}
		return out
	}
	tests := []struct {
		name     string
		policy   corev1.DNSPolicy
		hostNet  bool
		podDNS   *corev1.PodDNSConfig
		edit     func(*Options)
		want     *runtimeapi.DNSConfig
		warnings []string // prefixes
	}{
		{name: "ClusterFirst", policy: corev1.DNSClusterFirst, want: cluster},
		{name: "empty policy is ClusterFirst", want: cluster},
		{name: "ClusterFirst without a cluster domain keeps the host searches", policy: corev1.DNSClusterFirst,
			edit: func(o *Options) { o.ClusterDomain = "" },
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: host.Searches, Options: []string{"ndots:5"}}},
		{name: "ClusterFirst of a hostNetwork pod is the host's", policy: corev1.DNSClusterFirst, hostNet: true, want: host},
		{name: "ClusterFirstWithHostNet", policy: corev1.DNSClusterFirstWithHostNet, hostNet: true, want: cluster},
		{name: "ClusterFirst without cluster DNS falls back to Default", policy: corev1.DNSClusterFirst,
			edit: func(o *Options) { o.ClusterDNS = nil }, want: host, warnings: []string{"MissingClusterDNS:"}},
		{name: "Default", policy: corev1.DNSDefault, want: host},
		{name: "Default without a host resolv.conf", policy: corev1.DNSDefault,
			edit: func(o *Options) { o.ResolvConf = "" },
			want: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}}},
		{name: "None is the pod's dnsConfig alone", policy: corev1.DNSNone,
			podDNS: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "edns0"}}},
			want: &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"a.example"}, Options: []string{"ndots:2", "edns0"}}},
		{name: "dnsConfig merged into ClusterFirst", policy: corev1.DNSClusterFirst,
			podDNS: &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: []string{"corp.example", "x.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "timeout", Value: &five}}},
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "1.1.1.1"},
				Searches: append(cluster.Searches, "x.example"), Options: []string{"ndots:2", "timeout:5"}}},
		{name: "at most 3 nameservers", policy: corev1.DNSDefault,
			podDNS:   &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}},
			want:     &runtimeapi.DNSConfig{Servers: []string{"192.168.0.1", "192.168.0.2", "1.1.1.1"}, Searches: host.Searches, Options: host.Options},
			warnings: []string{"DNSConfigForming: Nameserver limits were exceeded"}},
		{name: "at most 32 searches", policy: corev1.DNSNone,
			podDNS:   &corev1.PodDNSConfig{Searches: many("s", 40)},
			want:     &runtimeapi.DNSConfig{Searches: many("s", 32)},
			warnings: []string{"DNSConfigForming: Search Line limits were exceeded"}},
		{name: "searches too long are dropped", policy: corev1.DNSNone,
			podDNS:   &corev1.PodDNSConfig{Searches: []string{"a.example", strings.Repeat("x", 254), "b.example"}},
			want:     &runtimeapi.DNSConfig{Searches: []string{"a.example", "b.example"}},
			warnings: []string{"DNSConfigForming: Search Line limits were exceeded"}},
		{name: "the search line fits 2048 characters", policy: corev1.DNSNone,
			podDNS:   &corev1.PodDNSConfig{Searches: many(strings.Repeat("y", 200), 12)},
			want:     &runtimeapi.DNSConfig{Searches: many(strings.Repeat("y", 200), 9)},
			warnings: []string{"DNSConfigForming: Search Line limits were exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
				Spec:       corev1.PodSpec{DNSPolicy: tt.policy, HostNetwork: tt.hostNet, DNSConfig: tt.podDNS},
			}
			o := opts
			if tt.edit != nil {
				tt.edit(&o)
			}
			got, err := PodDNSConfig(pod, o)
			if err != nil {
				t.Fatal(err)
			}
			if !dnsEqual(got.Config, tt.want) {
				t.Errorf("DNS config\n got: %v\nwant: %v", got.Config, tt.want)
			}
			if len(got.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d starting %q", got.Warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(got.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to start %q", i, got.Warnings[i], w)
				}
			}
		})
	}
}

// dnsEqual compares DNS configs, nil and empty lists alike.
func dnsEqual(a, b *runtimeapi.DNSConfig) bool {
	eq := func(x, y []string) bool { return len(x) == len(y) && (len(x) == 0 || reflect.DeepEqual(x, y)) }
	return eq(a.GetServers(), b.GetServers()) && eq(a.GetSearches(), b.GetSearches()) && eq(a.GetOptions(), b.GetOptions())
}

func TestPodDNSConfigHostResolvConfErrors(t *testing.T) {
	tests := []struct {
		name, content string
		missing       bool
		want          error  // errors.Is, when set
		wantText      string // in the message
	}{
		{name: "missing file", missing: true, want: fs.ErrNotExist, wantText: "pod ns/web"},
		{name: "nameserver without an address", content: "nameserver\n", wantText: "nameserver line without an address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]string{}
			if !tt.missing {
				m["/etc/resolv.conf"] = tt.content
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.PodSpec{DNSPolicy: corev1.DNSDefault}}
			_, err := PodDNSConfig(pod, Options{ResolvConf: "/etc/resolv.conf", ReadFile: files(m)})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), "ns/web") {
				t.Errorf("error %q does not name the pod and %q", err, tt.wantText)
			}
		})
	}
}
