package podspec

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestSandboxConfigLogsAndPrivilege(t *testing.T) {
	yes, uid := true, int64(1000)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			HostNetwork:     true,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: &uid},
			Containers: []corev1.Container{
				{Name: "a"},
				{Name: "b", SecurityContext: &corev1.SecurityContext{Privileged: &yes}},
			},
		},
	}
	cfg := SandboxConfigBestEffort(pod, 2, Options{PodLogsDir: "/var/log/pods"})
	if cfg.LogDirectory != "/var/log/pods/ns_web_u1" {
		t.Errorf("LogDirectory = %q", cfg.LogDirectory)
	}
	if cfg.Hostname != "" {
		t.Errorf("hostNetwork sandbox gets hostname %q; runc refuses one without its own UTS namespace", cfg.Hostname)
	}
	sc := cfg.Linux.SecurityContext
	if !sc.Privileged || sc.RunAsUser.GetValue() != 1000 || sc.NamespaceOptions.Network.String() != "NODE" {
		t.Errorf("sandbox security context = %v", sc)
	}
	pod.Spec.Containers[1].SecurityContext = nil
	if SandboxConfigBestEffort(pod, 2, Options{}).Linux.SecurityContext.Privileged {
		t.Error("sandbox privileged without a privileged container")
	}
}

func TestContainerConfigLogPathAndResources(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	c := &corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}}
	cfg := LiteralContainerConfig(pod, c, 3)
	if cfg.LogPath != "app/2.log" {
		t.Errorf("LogPath = %q, want app/2.log (attempt 3 is restart 2)", cfg.LogPath)
	}
	r := cfg.Linux.Resources
	if r.CpuQuota != 25000 || r.CpuPeriod != 100000 || r.CpuShares != 256 || r.MemoryLimitInBytes != 64<<20 {
		t.Errorf("resources = %v", r)
	}
}

// The update request of an in-place resize carries the Linux resources a
// container of the resized spec is created with, OOM score included.
func TestUpdateContainerResourcesRequest(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		}}}}}
	o := Options{MemoryCapacity: 4 << 30}
	c := &pod.Spec.Containers[0]
	req := UpdateContainerResourcesRequest(pod, c, "c1", o)
	if req.ContainerId != "c1" {
		t.Errorf("ContainerId = %q", req.ContainerId)
	}
	r := req.Linux
	if r.CpuShares != 512 || r.CpuQuota != 150000 || r.CpuPeriod != 100000 || r.MemoryLimitInBytes != 256<<20 {
		t.Errorf("resources = %v", r)
	}
	if want := ContainerConfig(pod, c, 1, Env{}, o).Linux.Resources; !proto.Equal(r, want) {
		t.Errorf("update resources %v differ from the create's %v", r, want)
	}
	if r.OomScoreAdj != ContainerOOMScoreAdj(pod, c, o.MemoryCapacity) || r.OomScoreAdj <= 2 {
		t.Errorf("OomScoreAdj = %d, want the Burstable score of a 128Mi request", r.OomScoreAdj)
	}
}

func TestPodHostname(t *testing.T) {
	yes := true
	long := strings.Repeat("a", 62) + "-b"
	tests := []struct {
		name, podName, hostname, subdomain string
		fqdn                               bool
		want                               string
		wantErr                            string
	}{
		{name: "pod name", podName: "web", want: "web"},
		{name: "spec.hostname", podName: "web", hostname: "db-0", want: "db-0"},
		{name: "subdomain alone leaves the hostname", podName: "web", hostname: "db-0", subdomain: "db", want: "db-0"},
		{name: "cut to 63 without a trailing dash", podName: long, want: strings.Repeat("a", 62)},
		{name: "setHostnameAsFQDN", podName: "web", hostname: "db-0", subdomain: "db", fqdn: true,
			want: "db-0.db.ns.svc.cluster.local"},
		{name: "setHostnameAsFQDN without a subdomain", podName: "web", fqdn: true, want: "web"},
		{name: "FQDN too long", podName: "web", hostname: strings.Repeat("h", 41), subdomain: "db", fqdn: true, // 65
			wantErr: "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tt.podName, Namespace: "ns"},
				Spec: corev1.PodSpec{Hostname: tt.hostname, Subdomain: tt.subdomain}}
			if tt.fqdn {
				pod.Spec.SetHostnameAsFQDN = &yes
			}
			got, err := PodHostname(pod, "cluster.local")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "ns/"+tt.podName) {
					t.Fatalf("error = %v, want one naming the pod and %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("PodHostname = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPodSandboxConfigDNSAndPorts(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Ports: []corev1.ContainerPort{
				{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP, HostIP: "127.0.0.1"},
				{ContainerPort: 81}, // no hostPort: no mapping
			}},
			{Name: "b", Ports: []corev1.ContainerPort{{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP}}},
		}},
	}
	o := Options{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: "/etc/resolv.conf",
		ReadFile: files(map[string]string{"/etc/resolv.conf": "nameserver 192.168.0.1\nsearch corp.example\n"})}
	cfg, err := SandboxConfig(pod, 1, o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hostname != "web" {
		t.Errorf("Hostname = %q", cfg.Hostname)
	}
	if got := cfg.DnsConfig.GetServers(); len(got) != 1 || got[0] != "10.96.0.10" {
		t.Errorf("DNS servers = %v", got)
	}
	want := []*runtimeapi.PortMapping{
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080, HostIp: "127.0.0.1"},
		{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353},
	}
	if len(cfg.PortMappings) != len(want) {
		t.Fatalf("port mappings = %v, want %v", cfg.PortMappings, want)
	}
	for i := range want {
		if !proto.Equal(cfg.PortMappings[i], want[i]) {
			t.Errorf("port mapping %d = %v, want %v", i, cfg.PortMappings[i], want[i])
		}
	}

	// An unreadable host resolv.conf fails the sandbox, naming the pod;
	// SandboxConfig goes on without the host's DNS.
	o.ReadFile = files(nil)
	if _, err := SandboxConfig(pod, 1, o); err == nil || !strings.Contains(err.Error(), "ns/web") {
		t.Errorf("PodSandboxConfig error = %v, want one naming the pod", err)
	}
	if cfg := SandboxConfigBestEffort(pod, 1, o); cfg.Hostname != "web" || len(cfg.DnsConfig.GetServers()) != 0 || len(cfg.PortMappings) != 2 {
		t.Errorf("SandboxConfig without the host's DNS = %v", cfg)
	}
}

func TestContainerConfigOOMScoreAdj(t *testing.T) {
	burstable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	guaranteed := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{ // limits alone: a static pod
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	tests := []struct {
		name string
		cfg  *runtimeapi.ContainerConfig
		want int64
	}{
		{"burstable on 4Gi", ContainerConfig(burstable, &burstable.Spec.Containers[0], 1, Env{}, Options{MemoryCapacity: 4 << 30}), 750},
		{"burstable, capacity unknown", LiteralContainerConfig(burstable, &burstable.Spec.Containers[0], 1), 999},
		{"guaranteed", LiteralContainerConfig(guaranteed, &guaranteed.Spec.Containers[0], 1), -997},
	}
	for _, tt := range tests {
		if got := tt.cfg.Linux.Resources.OomScoreAdj; got != tt.want {
			t.Errorf("%s: OomScoreAdj = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestContainerConfigNoNewPrivs(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name  string
		allow *bool
		want  bool
	}{{"unset", nil, false}, {"allowed", &yes, false}, {"not allowed", &no, true}} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: tc.allow}}}}}
		cfg := ContainerConfig(pod, &pod.Spec.Containers[0], 1, Env{}, Options{})
		if got := cfg.Linux.SecurityContext.NoNewPrivs; got != tc.want {
			t.Errorf("%s: no_new_privs %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The fsGroup is the first supplemental group of the sandbox and of every
// container, before the pod's supplementalGroups, as the kubelet adds it:
// a container of any user then reads the volumes given that group.
func TestFSGroupIsASupplementalGroup(t *testing.T) {
	fsGroup := int64(1234)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{FSGroup: &fsGroup, SupplementalGroups: []int64{5, 6}},
			Containers:      []corev1.Container{{Name: "a"}},
		},
	}
	want := "[1234 5 6]"
	if got := fmt.Sprint(SandboxConfigBestEffort(pod, 1, Options{}).Linux.SecurityContext.SupplementalGroups); got != want {
		t.Errorf("sandbox supplemental groups = %s, want %s", got, want)
	}
	if got := fmt.Sprint(LiteralContainerConfig(pod, &pod.Spec.Containers[0], 1).Linux.SecurityContext.SupplementalGroups); got != want {
		t.Errorf("container supplemental groups = %s, want %s", got, want)
	}
	if pod.Spec.SecurityContext.SupplementalGroups[0] != 5 {
		t.Error("the pod's supplementalGroups were changed")
	}
	pod.Spec.SecurityContext.FSGroup = nil
	if got := fmt.Sprint(LiteralContainerConfig(pod, &pod.Spec.Containers[0], 1).Linux.SecurityContext.SupplementalGroups); got != "[5 6]" {
		t.Errorf("without fsGroup: supplemental groups = %s, want [5 6]", got)
	}
}

// The pod's sysctls reach the runtime in the sandbox config, names with
// dots (a slash-separated name converted, as the kubelet converts it).
func TestSandboxConfigSysctls(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
				{Name: "kernel.shm_rmid_forced", Value: "1"},
				{Name: "net/ipv4/ip_local_port_range", Value: "1024 65535"},
			}},
			Containers: []corev1.Container{{Name: "a"}},
		},
	}
	got := SandboxConfigBestEffort(pod, 1, Options{}).Linux.Sysctls
	want := map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_local_port_range": "1024 65535"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sandbox sysctls = %v, want %v", got, want)
	}
	pod.Spec.SecurityContext.Sysctls = nil
	if got := SandboxConfigBestEffort(pod, 1, Options{}).Linux.Sysctls; len(got) != 0 {
		t.Errorf("sandbox sysctls without any = %v", got)
	}
}
