package kubeletconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadYAMLAllSupportedFields(t *testing.T) {
	path := write(t, "kubelet.yaml", header+`
staticPodPath: /etc/kubernetes/manifests
containerRuntimeEndpoint: unix:///run/crio/crio.sock
imageServiceEndpoint: unix:///run/images.sock
runtimeRequestTimeout: 30s
healthzBindAddress: 0.0.0.0
healthzPort: 0
podLogsDir: /srv/pods
maxPods: 42
fileCheckFrequency: 5s
syncFrequency: 30s
crashLoopBackOff:
  maxContainerRestartPeriod: 1m
nodeStatusUpdateFrequency: 4s
nodeStatusReportFrequency: 1m
kubeAPIQPS: 0
kubeAPIBurst: 7
registerNode: false
registerWithTaints:
- {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
address: 127.0.0.1
port: 11250
clusterDNS: [10.96.0.10, fd00::a]
clusterDomain: cluster.local
resolvConf: /run/systemd/resolve/resolv.conf
`)
	cfg, ignored, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ignored) != 0 {
		t.Errorf("ignored = %v, want none", ignored)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"staticPodPath", cfg.StaticPodPath, "/etc/kubernetes/manifests"},
		{"containerRuntimeEndpoint", cfg.ContainerRuntimeEndpoint, "unix:///run/crio/crio.sock"},
		{"imageServiceEndpoint", cfg.ImageServiceEndpoint, "unix:///run/images.sock"},
		{"runtimeRequestTimeout", cfg.RuntimeRequestTimeout.Duration, 30 * time.Second},
		{"healthzBindAddress", cfg.HealthzBindAddress, "0.0.0.0"},
		{"healthzPort", *cfg.HealthzPort, int32(0)},
		{"podLogsDir", cfg.PodLogsDir, "/srv/pods"},
		{"maxPods", cfg.MaxPods, int32(42)},
		{"fileCheckFrequency", cfg.FileCheckFrequency.Duration, 5 * time.Second},
		{"syncFrequency", cfg.SyncFrequency.Duration, 30 * time.Second},
		{"maxContainerRestartPeriod", cfg.CrashLoopBackOff.MaxContainerRestartPeriod.Duration, time.Minute},
		{"nodeStatusUpdateFrequency", cfg.NodeStatusUpdateFrequency.Duration, 4 * time.Second},
		{"nodeStatusReportFrequency", cfg.NodeStatusReportFrequency.Duration, time.Minute},
		{"kubeAPIQPS", *cfg.KubeAPIQPS, int32(0)},
		{"kubeAPIBurst", cfg.KubeAPIBurst, int32(7)},
		{"registerNode", *cfg.RegisterNode, false},
		{"registerWithTaints", cfg.RegisterWithTaints, []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}},
		{"address", cfg.Address, "127.0.0.1"},
		{"port", cfg.Port, int32(11250)},
		{"clusterDNS", cfg.ClusterDNS, []string{"10.96.0.10", "fd00::a"}},
		{"clusterDomain", cfg.ClusterDomain, "cluster.local"},
		{"resolvConf", *cfg.ResolverConfig, "/run/systemd/resolve/resolv.conf"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestLoadJSONAppliesDefaults(t *testing.T) {
	path := write(t, "kubelet.json", `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":20}`)
	cfg, ignored, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ignored) != 0 {
		t.Errorf("ignored = %v, want none", ignored)
	}
	want := Defaults()
	want.MaxPods = 20
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load = %+v\nwant  %+v", cfg, want)
	}
}

func TestDefaultsAreTheKubelets(t *testing.T) {
	d := Defaults()
	checks := []struct {
		field     string
		got, want any
	}{
		{"apiVersion", d.APIVersion, "kubelet.config.k8s.io/v1beta1"},
		{"kind", d.Kind, "KubeletConfiguration"},
		{"staticPodPath", d.StaticPodPath, ""},
		{"containerRuntimeEndpoint", d.ContainerRuntimeEndpoint, "unix:///run/containerd/containerd.sock"},
		{"imageServiceEndpoint", d.ImageServiceEndpoint, ""},
		{"runtimeRequestTimeout", d.RuntimeRequestTimeout.Duration, 2 * time.Minute},
		{"healthzBindAddress", d.HealthzBindAddress, "127.0.0.1"},
		{"healthzPort", *d.HealthzPort, int32(10248)},
		{"podLogsDir", d.PodLogsDir, "/var/log/pods"},
		{"maxPods", d.MaxPods, int32(110)},
		{"fileCheckFrequency", d.FileCheckFrequency.Duration, 20 * time.Second},
		{"syncFrequency", d.SyncFrequency.Duration, time.Minute},
		{"maxContainerRestartPeriod", d.CrashLoopBackOff.MaxContainerRestartPeriod.Duration, 300 * time.Second},
		{"nodeStatusUpdateFrequency", d.NodeStatusUpdateFrequency.Duration, 10 * time.Second},
		{"nodeStatusReportFrequency", d.NodeStatusReportFrequency.Duration, 5 * time.Minute},
		{"kubeAPIQPS", *d.KubeAPIQPS, int32(50)},
		{"kubeAPIBurst", d.KubeAPIBurst, int32(100)},
		{"registerNode", *d.RegisterNode, true},
		{"address", d.Address, "127.0.0.1"},
		{"port", d.Port, int32(10250)},
		{"clusterDNS", d.ClusterDNS, []string(nil)},
		{"clusterDomain", d.ClusterDomain, ""},
		{"resolvConf", *d.ResolverConfig, "/etc/resolv.conf"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("default %s = %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestLoadReportFrequencyFollowsExplicitUpdateFrequency(t *testing.T) {
	cfg, _, err := Load(write(t, "k.yaml", header+"nodeStatusUpdateFrequency: 20s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.NodeStatusReportFrequency.Duration; got != 20*time.Second {
		t.Errorf("nodeStatusReportFrequency = %v, want 20s like the explicit update frequency", got)
	}
}

func TestLoadResolvesRelativePaths(t *testing.T) {
	path := write(t, "k.yaml", header+"staticPodPath: manifests\npodLogsDir: ../logs\nresolvConf: resolv.conf\n")
	cfg, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if want := filepath.Join(dir, "manifests"); cfg.StaticPodPath != want {
		t.Errorf("staticPodPath = %q, want %q", cfg.StaticPodPath, want)
	}
	if want := filepath.Join(filepath.Dir(dir), "logs"); cfg.PodLogsDir != want {
		t.Errorf("podLogsDir = %q, want %q", cfg.PodLogsDir, want)
	}
	if want := filepath.Join(dir, "resolv.conf"); *cfg.ResolverConfig != want {
		t.Errorf("resolvConf = %q, want %q", *cfg.ResolverConfig, want)
	}
}

// TestLoadEmptyResolvConfMeansNone: as for the kubelet, resolvConf: ""
// is no host resolv.conf, not the default one.
func TestLoadEmptyResolvConfMeansNone(t *testing.T) {
	cfg, _, err := Load(write(t, "k.yaml", header+`resolvConf: ""`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.ResolverConfig != "" {
		t.Errorf("resolvConf = %q, want it empty", *cfg.ResolverConfig)
	}
}

func TestLoadListsIgnoredFields(t *testing.T) {
	path := write(t, "k.yaml", header+`
maxPods: 10
systemReserved: {memory: 100Mi}
cgroupDriver: systemd
authentication:
  anonymous: {enabled: false}
crashLoopBackOff: {}
`)
	cfg, ignored, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cgroupDriver", "systemReserved"}; !slices.Equal(ignored, want) {
		t.Errorf("ignored = %v, want %v", ignored, want)
	}
	if cfg.CgroupDriver != "systemd" || cfg.MaxPods != 10 {
		t.Errorf("fields not decoded: cgroupDriver=%q maxPods=%d", cfg.CgroupDriver, cfg.MaxPods)
	}
}

func TestIgnoredFieldsDescendsIntoPartlySupported(t *testing.T) {
	raw := map[string]any{
		"apiVersion": "x", "kind": "y",
		"crashLoopBackOff": map[string]any{"maxContainerRestartPeriod": "1m", "future": 1},
		"authentication":   map[string]any{"anonymous": map[string]any{"enabled": false}, "webhook": map[string]any{"enabled": true}},
		"readOnlyPort":     1,
	}
	if got, want := ignoredFields(raw, SupportedFields), []string{"authentication.webhook", "crashLoopBackOff.future", "readOnlyPort"}; !slices.Equal(got, want) {
		t.Errorf("ignoredFields = %v, want %v", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		kind    error
		want    string
	}{
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n", ErrWrongKind, `"KubeProxyConfiguration"`},
		{"wrong version", "apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n", ErrWrongKind, `"kubelet.config.k8s.io/v1alpha1"`},
		{"no type", "maxPods: 3\n", ErrWrongKind, `apiVersion ""`},
		{"empty", "", ErrWrongKind, ""},
		{"not an object", "- a\n- b\n", ErrDecode, "not an object"},
		{"syntax", header + "maxPods: [\n", ErrDecode, ""},
		{"unknown field", header + "maxPodz: 3\n", ErrDecode, "maxPodz"},
		{"unknown nested field", header + "crashLoopBackOff: {maxRestart: 1m}\n", ErrDecode, "maxRestart"},
		{"duplicate field", header + "maxPods: 3\nmaxPods: 4\n", ErrDecode, "maxPods"},
		{"wrong type", header + "maxPods: many\n", ErrDecode, ""},
		{"bad port", header + "port: 70000\n", ErrInvalid, "port"},
		{"bad healthz address", header + "healthzBindAddress: localhost\n", ErrInvalid, "healthzBindAddress"},
		{"negative duration", header + "syncFrequency: -1s\n", ErrInvalid, "syncFrequency"},
		{"restart period", header + "crashLoopBackOff: {maxContainerRestartPeriod: 10m}\n", ErrInvalid, "crashLoopBackOff.maxContainerRestartPeriod"},
		{"cluster DNS", header + "clusterDNS: [10.96.0.10, kube-dns]\n", ErrInvalid, "clusterDNS[1]"},
		{"taint effect", header + "registerWithTaints: [{key: a, effect: Sometimes}]\n", ErrInvalid, "registerWithTaints[0].effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "k.yaml", tc.content)
			cfg, _, err := Load(path)
			if err == nil {
				t.Fatalf("accepted: %+v", cfg)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %q is not %v", err, tc.kind)
			}
			for _, s := range []string{path, tc.want} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}

	missing := filepath.Join(t.TempDir(), "absent.yaml")
	if _, _, err := Load(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
}

// TestSupportedNamesRealFields guards SupportedFields as it grows: every path
// must be a JSON field of KubeletConfiguration.
func TestSupportedNamesRealFields(t *testing.T) {
	got := Supported()
	if !slices.IsSorted(got) || len(got) != len(SupportedFields) {
		t.Fatalf("Supported() = %v, want SupportedFields sorted", got)
	}
	got[0] = "mutated"
	if slices.Contains(Supported(), "mutated") {
		t.Error("Supported() shares its slice with SupportedFields")
	}
	for _, path := range SupportedFields {
		typ := reflect.TypeOf(kubeletconfigv1beta1.KubeletConfiguration{})
		for _, name := range strings.Split(path, ".") {
			f, ok := jsonField(typ, name)
			if !ok {
				t.Errorf("supported field %q: no JSON field %q in %s", path, name, typ)
				break
			}
			typ = f.Type
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
		}
	}
}

func jsonField(typ reflect.Type, name string) (reflect.StructField, bool) {
	if typ.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
