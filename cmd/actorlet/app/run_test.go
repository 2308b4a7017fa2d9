package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

func resolveArgs(t *testing.T, p kubeletconfig.Profile, args ...string) (*nodeConfig, error) {
	t.Helper()
	parsed, own, err := parseCommandLine(args, p, nil)
	if err != nil {
		return nil, err
	}
	return resolve(parsed, own, p)
}

func TestFlagsWinOverConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /from/config
containerRuntimeEndpoint: unix:///from/config.sock
healthzPort: 12345
runtimeRequestTimeout: 30s
cgroupDriver: systemd
crashLoopBackOff: {maxContainerRestartPeriod: 1m}
registerNode: false
registerWithTaints:
- {key: dedicated, value: infra, effect: NoSchedule}
- {key: node-role.kubernetes.io/control-plane, effect: NoExecute}
maxPods: 30
nodeStatusUpdateFrequency: 3s
nodeLeaseDurationSeconds: 12
kubeAPIQPS: 5
kubeAPIBurst: 9
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: /from/config/logs
systemReserved: {memory: 1Gi}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	nc, err := resolveArgs(t, kubeletconfig.RunProfile, "--config", cfg, "--healthz-port", "20000", "--hostname-override", "Node-A", "--max-pods", "25",
		"--cluster-domain", "example.internal", "--pod-logs-dir", "/from/flag/logs", "--node-lease-duration-seconds", "8")
	if err != nil {
		t.Fatal(err)
	}
	kc := nc.kc
	if *kc.HealthzPort != 20000 || kc.PodLogsDir != "/from/flag/logs" || kc.NodeLeaseDurationSeconds != 8 {
		t.Errorf("healthz port %d, pod logs %q, lease %d: the flags must win over the config", *kc.HealthzPort, kc.PodLogsDir, kc.NodeLeaseDurationSeconds)
	}
	if kc.StaticPodPath != "/from/config" || kc.ContainerRuntimeEndpoint != "unix:///from/config.sock" || kc.RuntimeRequestTimeout.Duration != 30*time.Second {
		t.Errorf("config not applied: %q %q %s", kc.StaticPodPath, kc.ContainerRuntimeEndpoint, kc.RuntimeRequestTimeout)
	}
	if kc.ImageServiceEndpoint != kc.ContainerRuntimeEndpoint {
		t.Errorf("image endpoint %q, want the runtime's", kc.ImageServiceEndpoint)
	}
	if maxRestartPeriod(kc) != time.Minute {
		t.Errorf("crash-loop max %s, want 1m from crashLoopBackOff.maxContainerRestartPeriod", maxRestartPeriod(kc))
	}
	if *kc.RegisterNode || kc.MaxPods != 25 || kc.NodeStatusUpdateFrequency.Duration != 3*time.Second || kc.NodeStatusReportFrequency.Duration != 3*time.Second ||
		*kc.KubeAPIQPS != 5 || kc.KubeAPIBurst != 9 {
		t.Errorf("cluster fields from the config (maxPods from the flag): %+v", kc)
	}
	if len(kc.RegisterWithTaints) != 2 || kc.RegisterWithTaints[0].Value != "infra" || kc.RegisterWithTaints[1].Effect != "NoExecute" {
		t.Errorf("registerWithTaints: %v", kc.RegisterWithTaints)
	}
	if nc.nodeName != "node-a" {
		t.Errorf("node name %q, want it lower-cased", nc.nodeName)
	}
	if !slices.Equal(kc.ClusterDNS, []string{"10.96.0.10"}) || kc.ClusterDomain != "example.internal" || *kc.ResolverConfig != "" {
		t.Errorf("DNS: clusterDNS %v, clusterDomain %q (the flag's), resolvConf %q (the config's none)", kc.ClusterDNS, kc.ClusterDomain, *kc.ResolverConfig)
	}
	if !slices.Equal(nc.ignoredFields, []string{"systemReserved.memory"}) || len(nc.ignoredFlags) != 0 {
		t.Errorf("ignored fields %v flags %v, want [systemReserved.memory] and none", nc.ignoredFields, nc.ignoredFlags)
	}
}

func TestResolveRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--crashloop-backoff-initial", "1m", "--crashloop-backoff-max", "10s"}, "back-off"},
		{[]string{"--node-ip", "node-a"}, "--node-ip"},
		{[]string{"--cluster-dns", "10.96.0.10,kube-dns"}, "--cluster-dns"},
		{[]string{"--root-dir", ""}, "--root-dir"},
		{[]string{"--relist-period", "-1s"}, "--relist-period -1s"},
		{[]string{"--evented-relist-period", "0s"}, "--evented-relist-period 0s"},
		{[]string{"--config", "/nonexistent/kubelet.yaml"}, "/nonexistent/kubelet.yaml"},
		{[]string{"--max-pods=-5"}, "maxPods (--max-pods) -5 must not be a negative number"},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"--node-labels", "kubernetes.io/role=master"}, "unknown 'kubernetes.io' or 'k8s.io' labels"},
		{[]string{"--container-log-monitor-interval", "1s"}, "containerLogMonitorInterval must be"},
		{[]string{"--hostname-override", "Bad_Host"}, `node name "bad_host" from --hostname-override "Bad_Host" is not valid: a lowercase RFC 1123 subdomain`},
		{[]string{"--hostname-override", "node.-a"}, `node name "node.-a" from --hostname-override "node.-a" is not valid`},
		{[]string{"--hostname-override", "  "}, `node name from --hostname-override "  " is empty`},
	} {
		if _, err := resolveArgs(t, kubeletconfig.RunProfile, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.args, err, tc.want)
		}
	}
}

func TestLoggingFollowsTheKubeletsFlags(t *testing.T) {
	for _, tc := range []struct {
		p             kubeletconfig.Profile
		args          []string
		level, format string
	}{
		{kubeletconfig.RunProfile, nil, "info", "json"},
		{kubeletconfig.KubeletProfile, nil, "info", "console"},
		{kubeletconfig.KubeletProfile, []string{"--v=4"}, "debug", "console"},
		{kubeletconfig.KubeletProfile, []string{"--v=2", "--logging-format=json"}, "info", "json"},
		{kubeletconfig.RunProfile, []string{"--logging-format=text"}, "info", "console"},
		{kubeletconfig.KubeletProfile, []string{"--v=5", "--log-level=warn", "--log-format=json"}, "warn", "json"},
	} {
		nc, err := resolveArgs(t, tc.p, append([]string{"--node-ip=127.0.0.1", "--fail-cgroupv1=false"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if nc.log.level != tc.level || nc.log.format != tc.format {
			t.Errorf("%q: level %s format %s; want %s %s", tc.args, nc.log.level, nc.log.format, tc.level, tc.format)
		}
	}
}

// TestKubeletCommandLine: without a subcommand, or as kubelet, actorlet
// takes the kubelet's command line.
func TestKubeletCommandLine(t *testing.T) {
	run := func(name string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		m := kubeletMode
		m.stdout, m.stderr = &out, &errOut
		var err error
		if name == "kubelet" || len(args) == 0 || strings.HasPrefix(args[0], "-") {
			err = runKubelet(context.Background(), args, m)
		} else {
			root := NewRootCommand()
			root.SetArgs(args)
			root.SetOut(&out)
			root.SetErr(&errOut)
			err = root.Execute()
		}
		return out.String(), errOut.String(), err
	}
	out, _, err := run("kubelet", "--version")
	if err != nil || out != "Kubernetes "+KubernetesVersion+"\n" {
		t.Errorf("kubelet --version = %q, %v", out, err)
	}
	if out, _, err := run("actorlet", "--version=raw"); err != nil || !strings.Contains(out, `GitVersion:"v1.37.2-actorlet"`) {
		t.Errorf("--version=raw = %q, %v", out, err)
	}
	out, _, err = run("kubelet", "-h")
	if err != nil || !strings.Contains(out, "--bootstrap-kubeconfig") || !strings.Contains(out, "--rotate-certificates") {
		t.Errorf("kubelet -h = %v, %.200q", err, out)
	}
	out, _, err = run("actorlet", "run", "--help")
	if err != nil || !strings.Contains(out, "actorlet run [flags]") || !strings.Contains(out, "--crashloop-backoff-initial") {
		t.Errorf("actorlet run --help = %v, %.200q", err, out)
	}
	// The kubelet's deprecation notices, as the kubelet prints them; not
	// for actorlet run's flags.
	_, errOut, err := run("kubelet", "--max-pods=-5", "--maximum-dead-containers=3")
	if err == nil || !strings.Contains(err.Error(), "maxPods (--max-pods) -5") {
		t.Errorf("kubelet --max-pods=-5: %v", err)
	}
	if !strings.Contains(errOut, "Flag --max-pods has been deprecated, This parameter should be set via the config file") ||
		!strings.Contains(errOut, "Flag --maximum-dead-containers has been deprecated") {
		t.Errorf("deprecation notices: %q", errOut)
	}
	_, errOut, _ = run("actorlet", "run", "--max-pods=-5", "--maximum-dead-containers=3")
	if strings.Contains(errOut, "--max-pods has been deprecated") || !strings.Contains(errOut, "--maximum-dead-containers has been deprecated") {
		t.Errorf("actorlet run's deprecation notices: %q", errOut)
	}
	if _, _, err := run("kubelet", "run"); err == nil || !strings.Contains(err.Error(), "unknown command run") {
		t.Errorf("kubelet run: %v (the kubelet takes no arguments)", err)
	}
}

func TestParseLatency(t *testing.T) {
	got, err := parseLatency("RunPodSandbox=50ms, PullImage=1s")
	if err != nil || got["RunPodSandbox"] != 50*time.Millisecond || got["PullImage"] != time.Second {
		t.Fatalf("parseLatency = %v, %v", got, err)
	}
	for _, bad := range []string{"RunPodSandbox", "RunPodSandbox=soon"} {
		if _, err := parseLatency(bad); err == nil {
			t.Errorf("parseLatency(%q) accepted", bad)
		}
	}
}
