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

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustParse(t *testing.T, p Profile, args ...string) *Parsed {
	t.Helper()
	res, err := Parse(args, p, nil, nil)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return res
}

// TestKubeadmFiles: the files kubeadm v1.37 writes, with its command line.
func TestKubeadmFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "config.yaml", header+`
authentication:
  anonymous: {enabled: false}
  webhook: {cacheTTL: 0s, enabled: true}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s}
cgroupDriver: systemd
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {}
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
logging:
  flushFrequency: 0
  options:
    json: {infoBufferSize: "0"}
    text: {infoBufferSize: "0"}
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
`)
	res := mustParse(t, KubeletProfile, "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
		"--kubeconfig=/etc/kubernetes/kubelet.conf", "--config="+cfg, "--hostname-override=cp-1")
	if err := Validate(res.Config, KubeletProfile, false); err != nil {
		t.Fatalf("kubeadm's config is invalid: %v", err)
	}
	kc := res.Config
	if kc.Address != "0.0.0.0" || kc.Port != 10250 || !*kc.Authentication.Webhook.Enabled || *kc.Authentication.Anonymous.Enabled ||
		kc.Authorization.Mode != kubeletconfigv1beta1.KubeletAuthorizationModeWebhook || kc.Authentication.X509.ClientCAFile != "/etc/kubernetes/pki/ca.crt" {
		t.Errorf("API serving and auth: %s:%d %+v %+v", kc.Address, kc.Port, kc.Authentication, kc.Authorization)
	}
	// Zero durations in the file are unset: the kubelet's defaults.
	if kc.Authentication.Webhook.CacheTTL.Duration != 2*time.Minute || kc.Authorization.Webhook.CacheAuthorizedTTL.Duration != 5*time.Minute ||
		kc.Authorization.Webhook.CacheUnauthorizedTTL.Duration != 30*time.Second || kc.SyncFrequency.Duration != time.Minute {
		t.Errorf("defaults of zero durations: %+v %+v sync %v", kc.Authentication.Webhook, kc.Authorization.Webhook, kc.SyncFrequency)
	}
	if !kc.RotateCertificates || kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration != 300*time.Second {
		t.Errorf("rotateCertificates %v, maxContainerRestartPeriod %v", kc.RotateCertificates, kc.CrashLoopBackOff.MaxContainerRestartPeriod)
	}
	if res.Node.KubeConfig != "/etc/kubernetes/kubelet.conf" || res.Node.BootstrapKubeconfig != "/etc/kubernetes/bootstrap-kubelet.conf" ||
		res.Node.CertDirectory != "/var/lib/kubelet/pki" || res.Node.RootDirectory != "/var/lib/kubelet" || res.Node.HostnameOverride != "cp-1" {
		t.Errorf("node flags: %+v", res.Node)
	}
	flags, fields := Ignored(res.FlagSet, kc, KubeletProfile, nil)
	if len(flags) != 0 || !slices.Equal(fields, []string(nil)) {
		t.Errorf("ignored flags %v, fields %v; want none (the systemd driver is the runtime's to say)", flags, fields)
	}
}

func TestFlagsWinOverFileAndDropIns(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "kubelet.yaml", header+`
maxPods: 30
port: 11250
clusterDomain: from.file
featureGates: {MemoryQoS: false, NodeSwap: true}
evictionHard: {memory.available: 1Gi}
`)
	dropins := filepath.Join(dir, "kubelet.conf.d")
	write(t, dropins, "10-port.conf", header+"port: 12250\nmaxPods: 40\n")
	write(t, dropins, "20-more/30-pods.conf", header+"maxPods: 50\nregisterWithTaints: [{key: a, value: b, effect: NoSchedule}]\n")
	write(t, dropins, "ignored.yaml", header+"maxPods: 1\n")
	res := mustParse(t, KubeletProfile, "--config", cfg, "--config-dir", dropins, "--max-pods=60",
		"--feature-gates=MemoryQoS=true", "--cluster-domain", "from.flag")
	kc := res.Config
	if kc.MaxPods != 60 || kc.Port != 12250 || kc.ClusterDomain != "from.flag" {
		t.Errorf("maxPods %d (flag 60), port %d (drop-in 12250), clusterDomain %q (flag)", kc.MaxPods, kc.Port, kc.ClusterDomain)
	}
	if !reflect.DeepEqual(kc.RegisterWithTaints, []corev1.Taint{{Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule}}) {
		t.Errorf("taints from the nested drop-in: %v", kc.RegisterWithTaints)
	}
	if !reflect.DeepEqual(kc.FeatureGates, map[string]bool{"MemoryQoS": true, "NodeSwap": true}) {
		t.Errorf("feature gates %v: the flag's MemoryQoS with the file's NodeSwap", kc.FeatureGates)
	}
	if !reflect.DeepEqual(kc.EvictionHard, map[string]string{"memory.available": "1Gi"}) {
		t.Errorf("evictionHard %v", kc.EvictionHard)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Error(), "ignored.yaml") {
		t.Errorf("warnings %v; want the skipped ignored.yaml", res.Warnings)
	}
}

func TestWithoutConfigTheFlagsAreTheConfig(t *testing.T) {
	res := mustParse(t, KubeletProfile, "--max-pods=-5", "--port=99999")
	err := Validate(res.Config, KubeletProfile, false)
	for _, want := range []string{"maxPods (--max-pods) -5 must not be a negative number", "port (--port) 99999 must be between 1 and 65535"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want it to say %q", err, want)
		}
	}
}

func TestLenientDecodingWarns(t *testing.T) {
	cfg := write(t, "", "k.yaml", header+"maxPodz: 3\nmaxPods: 7\nmaxPods: 8\n")
	res := mustParse(t, KubeletProfile, "--config", cfg)
	if res.Config.MaxPods != 8 {
		t.Errorf("maxPods %d; want the lenient decoding's 8", res.Config.MaxPods)
	}
	if len(res.Warnings) != 1 {
		t.Fatalf("warnings %v; want one", res.Warnings)
	}
	for _, want := range []string{"lenient decoding", "strict decoding error", `unknown field "maxPodz"`, `"maxPods" already set`, cfg} {
		if !strings.Contains(res.Warnings[0].Error(), want) {
			t.Errorf("warning %q does not say %q", res.Warnings[0], want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"empty", "", "was empty"},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n", "KubeProxyConfiguration"},
		{"wrong version", "apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n", "v1alpha1"},
		{"no type", "maxPods: 3\n", "Object 'Kind' is missing"},
		{"syntax", header + "maxPods: [\n", "yaml"},
		{"wrong type", header + "maxPods: many\n", "maxPods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "", "k.yaml", tc.content)
			_, err := Parse([]string{"--config", path}, KubeletProfile, nil, nil)
			if err == nil || !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want ErrDecode naming %s and %q", err, path, tc.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	if _, err := Parse([]string{"--config", missing}, KubeletProfile, nil, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestRelativePathsAreTheFilesDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := write(t, dir, "k.yaml", header+`
staticPodPath: manifests
podLogsDir: ../logs
resolvConf: resolv.conf
tlsCertFile: pki/kubelet.crt
authentication: {x509: {clientCAFile: pki/ca.crt}}
`)
	kc := mustParse(t, KubeletProfile, "--config", cfg).Config
	for name, got := range map[string]string{
		"staticPodPath": kc.StaticPodPath, "resolvConf": *kc.ResolverConfig, "tlsCertFile": kc.TLSCertFile, "clientCAFile": kc.Authentication.X509.ClientCAFile,
	} {
		if !strings.HasPrefix(got, dir+"/") {
			t.Errorf("%s = %q, want it under %s", name, got, dir)
		}
	}
	if want := filepath.Join(filepath.Dir(dir), "logs"); kc.PodLogsDir != want {
		t.Errorf("podLogsDir = %q, want %q", kc.PodLogsDir, want)
	}
}

func TestProfiles(t *testing.T) {
	k := Defaults(KubeletProfile)
	r := Defaults(RunProfile)
	if k.Address != "0.0.0.0" || !*k.CgroupsPerQOS || !*k.FailCgroupV1 {
		t.Errorf("kubelet profile: address %s cgroupsPerQOS %v failCgroupV1 %v", k.Address, *k.CgroupsPerQOS, *k.FailCgroupV1)
	}
	if r.Address != "127.0.0.1" || *r.CgroupsPerQOS || *r.FailCgroupV1 {
		t.Errorf("run profile: address %s cgroupsPerQOS %v failCgroupV1 %v", r.Address, *r.CgroupsPerQOS, *r.FailCgroupV1)
	}
	// A file that says nothing keeps the profile's defaults.
	cfg := write(t, "", "k.yaml", header+"maxPods: 3\n")
	if kc := mustParse(t, RunProfile, "--config", cfg).Config; kc.Address != "127.0.0.1" || *kc.CgroupsPerQOS {
		t.Errorf("run profile with a file: address %s cgroupsPerQOS %v", kc.Address, *kc.CgroupsPerQOS)
	}
	rp := mustParse(t, RunProfile)
	if rp.Node.RootDirectory != RunRootDirectory || rp.Node.CertDirectory != RunCertDirectory {
		t.Errorf("run profile directories: %s %s", rp.Node.RootDirectory, rp.Node.CertDirectory)
	}
	// Port 0 (any free port) is actorlet run's.
	if err := Validate(mustParse(t, RunProfile, "--port=0").Config, RunProfile, true); err != nil {
		t.Errorf("run profile, --port=0 on cgroup v1: %v", err)
	}
	if err := Validate(mustParse(t, KubeletProfile, "--port=0").Config, KubeletProfile, false); err == nil {
		t.Error("kubelet profile accepts --port=0")
	}
	if err := Validate(Defaults(KubeletProfile), KubeletProfile, true); err == nil || !strings.Contains(err.Error(), "cgroup v1") {
		t.Errorf("kubelet profile on cgroup v1 = %v; want the kubelet's failCgroupV1 refusal", err)
	}
}

func TestHelpAndVersionStopEarly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	for _, args := range [][]string{{"-h", "--config", missing}, {"--version", "--config", missing}, {"--version=raw"}} {
		if _, err := Parse(args, KubeletProfile, nil, nil); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	if _, err := Parse([]string{"run"}, KubeletProfile, nil, nil); err == nil || !strings.Contains(err.Error(), "unknown command run") {
		t.Errorf("a non-flag argument: %v", err)
	}
}
