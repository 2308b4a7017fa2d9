package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func resolveArgs(t *testing.T, args ...string) (*nodeConfig, error) {
	t.Helper()
	o := &runOptions{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o.resolve(fs)
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
`), 0o600); err != nil {
		t.Fatal(err)
	}
	nc, err := resolveArgs(t, "--config", cfg, "--healthz-port", "20000", "--hostname-override", "Node-A", "--max-pods", "25",
		"--cluster-domain", "example.internal")
	if err != nil {
		t.Fatal(err)
	}
	if nc.healthzPort != 20000 {
		t.Errorf("healthz port %d: the flag must win over the config", nc.healthzPort)
	}
	if nc.podManifestPath != "/from/config" || nc.runtimeEndpoint != "unix:///from/config.sock" || nc.runtimeTimeout != 30*time.Second {
		t.Errorf("config not applied: %q %q %s", nc.podManifestPath, nc.runtimeEndpoint, nc.runtimeTimeout)
	}
	if nc.imageEndpoint != nc.runtimeEndpoint {
		t.Errorf("image endpoint %q, want the runtime's", nc.imageEndpoint)
	}
	if nc.backoffMax != time.Minute {
		t.Errorf("crash-loop max %s, want 1m from crashLoopBackOff.maxContainerRestartPeriod", nc.backoffMax)
	}
	cl := nc.cluster
	if cl.registerNode || cl.maxPods != 25 || cl.statusUpdate != 3*time.Second || cl.statusReport != 3*time.Second ||
		cl.leaseSeconds != 12 || cl.qps != 5 || cl.burst != 9 {
		t.Errorf("cluster fields from the config (maxPods from the flag): %+v", cl)
	}
	taints, err := parseTaints(cl.taints)
	if err != nil || len(taints) != 2 || taints[0].Value != "infra" || taints[1].Effect != "NoExecute" {
		t.Errorf("registerWithTaints: %v %v", taints, err)
	}
	if nc.nodeName != "node-a" {
		t.Errorf("node name %q, want it lower-cased", nc.nodeName)
	}
	if !slices.Equal(nc.clusterDNS, []string{"10.96.0.10"}) || nc.clusterDomain != "example.internal" || nc.resolvConf != "" {
		t.Errorf("DNS: clusterDNS %v, clusterDomain %q (the flag's), resolvConf %q (the config's none)", nc.clusterDNS, nc.clusterDomain, nc.resolvConf)
	}
	if !slices.Equal(nc.ignored, []string{"cgroupDriver"}) {
		t.Errorf("ignored %v, want [cgroupDriver]", nc.ignored)
	}
}

func TestResolveRejectsBadValues(t *testing.T) {
	if _, err := resolveArgs(t, "--crashloop-backoff-initial", "1m", "--crashloop-backoff-max", "10s"); err == nil || !strings.Contains(err.Error(), "back-off") {
		t.Errorf("an inverted back-off range: %v", err)
	}
	if _, err := resolveArgs(t, "--node-ip", "node-a"); err == nil || !strings.Contains(err.Error(), "--node-ip") {
		t.Errorf("a node IP that is no IP: %v", err)
	}
	if _, err := resolveArgs(t, "--cluster-dns", "10.96.0.10,kube-dns"); err == nil || !strings.Contains(err.Error(), "--cluster-dns") {
		t.Errorf("a cluster DNS that is no IP: %v", err)
	}
	if _, err := resolveArgs(t, "--root-dir", ""); err == nil || !strings.Contains(err.Error(), "--root-dir") {
		t.Errorf("an empty root dir: %v", err)
	}
	if _, err := resolveArgs(t, "--config", "/nonexistent/kubelet.yaml"); err == nil || !strings.Contains(err.Error(), "/nonexistent/kubelet.yaml") {
		t.Errorf("a missing config file: %v", err)
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

func TestParseEvictionHard(t *testing.T) {
	got, err := parseEvictionHard("memory.available<100Mi, nodefs.available<10%")
	if err != nil || len(got) != 2 || got["memory.available"] != "100Mi" || got["nodefs.available"] != "10%" {
		t.Fatalf("= %v, %v", got, err)
	}
	if _, err := parseEvictionHard("memory.available=100Mi"); err == nil {
		t.Fatal("no error for a malformed threshold")
	}
}
