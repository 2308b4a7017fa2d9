package kubeletconfig

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestValidateTheKubeletsRules: each case breaks one of the kubelet's rules,
// once by flag and, where the rule has a field, once by config file; both
// go through the same validation and say the same thing.
func TestValidateTheKubeletsRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		file  string
		want  string
	}{
		{"negative max pods", []string{"--max-pods=-5"}, "maxPods: -5", "maxPods (--max-pods) -5 must not be a negative number"},
		{"port", []string{"--port=70000"}, "port: 70000", "port (--port) 70000 must be between 1 and 65535, inclusive"},
		{"healthz port", []string{"--healthz-port=-1"}, "healthzPort: -1", "healthzPort (--healthz-port) -1 must be between 1 and 65535"},
		{"read-only port", []string{"--read-only-port=65536"}, "readOnlyPort: 65536", "readOnlyPort (--read-only-port) 65536"},
		{"image gc order", []string{"--image-gc-high-threshold=50", "--image-gc-low-threshold=60"}, "imageGCHighThresholdPercent: 50\nimageGCLowThresholdPercent: 60",
			"imageGCLowThresholdPercent (--image-gc-low-threshold) 60 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 50"},
		{"image gc range", []string{"--image-gc-high-threshold=101"}, "imageGCHighThresholdPercent: 101", "must be between 0 and 100"},
		{"event qps", []string{"--event-qps=-1"}, "eventRecordQPS: -1", "eventRecordQPS (--event-qps) -1 must not be a negative number"},
		{"event burst", []string{"--event-burst=-1"}, "eventBurst: -1", "eventBurst (--event-burst) -1 must not be a negative number"},
		{"kube api qps", []string{"--kube-api-qps=-1"}, "kubeAPIQPS: -1", "kubeAPIQPS (--kube-api-qps) -1 must not be a negative number"},
		{"oom score", []string{"--oom-score-adj=-1001"}, "oomScoreAdj: -1001", "oomScoreAdj (--oom-score-adj) -1001 must be between -1000 and 1000"},
		{"pods per core", []string{"--pods-per-core=-1"}, "podsPerCore: -1", "podsPerCore (--pods-per-core) -1"},
		{"node status images", []string{"--node-status-max-images=-2"}, "nodeStatusMaxImages: -2", "must be -1 or greater"},
		{"registry qps", []string{"--registry-qps=-1"}, "registryPullQPS: -1", "registryPullQPS (--registry-qps) -1"},
		{"runonce", []string{"--runonce"}, "runOnce: true", "Runonce mode has been deprecated"},
		{"topology policy", []string{"--topology-manager-policy=most"}, "topologyManagerPolicy: most", `topologyManagerPolicy (--topology-manager-policy) "most" must be one of`},
		{"topology scope", []string{"--topology-manager-scope=node"}, "topologyManagerScope: node", `topologyManagerScope (--topology-manager-scope) "node"`},
		{"hairpin", []string{"--hairpin-mode=sometimes"}, "hairpinMode: sometimes", `option "sometimes" specified for hairpinMode`},
		{"system cgroups without root", []string{"--system-cgroups=/system"}, "systemCgroups: /system", "systemCgroups (--system-cgroups) was specified and cgroupRoot"},
		{"enforce allocatable", []string{"--enforce-node-allocatable=pods,bogus"}, "enforceNodeAllocatable: [pods, bogus]", `option "bogus" specified for enforceNodeAllocatable`},
		{"enforce without cgroup", []string{"--enforce-node-allocatable=system-reserved"}, "enforceNodeAllocatable: [system-reserved]", "systemReservedCgroup (--system-reserved-cgroup) must be specified"},
		{"none and more", []string{"--enforce-node-allocatable=none,pods"}, "enforceNodeAllocatable: [none, pods]", `may not contain additional enforcements when "none"`},
		{"pods without qos cgroups", []string{"--cgroups-per-qos=false"}, "cgroupsPerQOS: false", `cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods"`},
		{"reserved cpus", []string{"--reserved-cpus=a-b"}, "reservedSystemCPUs: a-b", "unable to parse reservedSystemCPUs (--reserved-cpus) a-b"},
		{"cfs period", []string{"--cpu-cfs-quota-period=2s"}, "cpuCFSQuotaPeriod: 2s", "cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 2s must be between 1ms and 1sec"},
		{"log max files", []string{"--container-log-max-files=1"}, "containerLogMaxFiles: 1", "containerLogMaxFiles must be greater than 1"},
		{"log monitor interval", nil, "containerLogMonitorInterval: 1s", "containerLogMonitorInterval must be a positive time duration greater than or equal to 3s"},
		{"empty runtime", []string{"--container-runtime-endpoint="}, "", ""},
		{"pod logs dir", nil, "podLogsDir: /var/log/../pods", `pod logs path "/var/log/../pods" must be normalized`},
		{"restart period", nil, "crashLoopBackOff: {maxContainerRestartPeriod: 10m}", "CrashLoopBackOff.MaxContainerRestartPeriod (got: 600 seconds) must be set between 1s and 300s"},
		{"lease", nil, "nodeLeaseDurationSeconds: -3", "nodeLeaseDurationSeconds must be greater than 0"},
		{"shutdown", nil, "shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s", "shutdownGracePeriodCriticalPods {20s} must be <= shutdownGracePeriod {10s}"},
		{"swap", nil, "memorySwap: {swapBehavior: Always}", `memorySwap.swapBehavior "Always" must be one of`},
		{"sysctls gated", nil, "defaultPodSysctls: {net.ipv4.ip_forward: \"1\"}", "DefaultPodSysctls feature gate is required"},
		{"parallel pulls", nil, "maxParallelImagePulls: 3\nserializeImagePulls: true", "maxParallelImagePulls cannot be larger than 1"},
		{"unknown gate", []string{"--feature-gates=NoSuchGate=true"}, "featureGates: {NoSuchGate: true}", "unrecognized feature gate: NoSuchGate"},
		{"locked gate", []string{"--feature-gates=NodeLogQuery=false"}, "featureGates: {NodeLogQuery: false}", "cannot set feature gate NodeLogQuery to false, feature is locked to true"},
		{"server bootstrap gate", []string{"--rotate-server-certificates", "--feature-gates=RotateKubeletServerCertificate=false"}, "", "serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate"},
		{"taint", nil, "registerWithTaints: [{key: a, effect: Sometimes}]", "invalid taint"},
		{"cluster dns", []string{"--cluster-dns=kube-dns"}, "clusterDNS: [kube-dns]", `clusterDNS[0] (--cluster-dns) "kube-dns" must be an IP address`},
		{"healthz address", nil, "healthzBindAddress: localhost", `healthzBindAddress (--healthz-bind-address) "localhost" must be an IP address`},
		{"authorization mode", []string{"--authorization-mode=RBAC"}, "authorization: {mode: RBAC}", `authorization.mode (--authorization-mode) "RBAC" must be`},
		{"negative ttl", []string{"--authentication-token-webhook-cache-ttl=-1s"}, "", "authentication.webhook.cacheTTL"},
		{"logging format", []string{"--logging-format=xml"}, "logging: {format: xml}", "logging.format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, args ...string) {
				t.Helper()
				res, err := Parse(args, KubeletProfile, nil, nil)
				if err == nil {
					err = Validate(res.Config, KubeletProfile, false)
				}
				if err == nil {
					t.Errorf("%s: accepted", how)
				} else if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %q does not say %q", how, err, tc.want)
				}
			}
			if tc.flags != nil {
				check("flags", tc.flags...)
			}
			if tc.file != "" {
				check("file", "--config", write(t, "", "k.yaml", header+tc.file+"\n"))
			}
		})
	}
}

func TestValidateAcceptsTheDefaults(t *testing.T) {
	if err := Validate(Defaults(KubeletProfile), KubeletProfile, false); err != nil {
		t.Errorf("the kubelet's defaults: %v", err)
	}
	if err := Validate(Defaults(RunProfile), RunProfile, true); err != nil {
		t.Errorf("actorlet run's defaults on cgroup v1: %v", err)
	}
}

func TestValidateNodeFlags(t *testing.T) {
	for _, tc := range []struct {
		labels string
		want   string
	}{
		{"node.kubernetes.io/pool=a,topology.kubernetes.io/zone=a,example.com/x=y", ""},
		{"kubernetes.io/role=master", "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [kubernetes.io/role]"},
		{"bad key!=x", "invalid node labels: 'bad key!'"},
		{"a=" + strings.Repeat("v", 64), "invalid node labels"},
	} {
		res, err := Parse([]string{"--node-labels", tc.labels}, KubeletProfile, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = ValidateNodeFlags(res.Node)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.labels, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v; want %q", tc.labels, err, tc.want)
		}
	}
}

func TestIgnoredListsWhatIsSetAndNotImplemented(t *testing.T) {
	cfg := write(t, "", "k.yaml", header+`
maxPods: 10
systemReserved: {memory: 100Mi}
cpuManagerPolicy: static
cpuManagerReconcilePeriod: 0s
authentication: {anonymous: {enabled: false}}
crashLoopBackOff: {}
`)
	res, err := Parse([]string{"--config", cfg, "--v=2", "--max-pods=5", "--kube-reserved=cpu=1", "--lock-file=/run/lock", "--log-level=debug"},
		KubeletProfile, func(fs *pflag.FlagSet) { fs.String("log-level", "info", "") }, nil)
	if err != nil {
		t.Fatal(err)
	}
	flags, fields := Ignored(res.FlagSet, res.Config, KubeletProfile, func(name string) bool { return name == "log-level" })
	if want := []string{"--kube-reserved", "--lock-file"}; !equal(flags, want) {
		t.Errorf("ignored flags %v; want %v", flags, want)
	}
	if want := []string{"cpuManagerPolicy", "kubeReserved.cpu", "systemReserved.memory"}; !equal(fields, want) {
		t.Errorf("ignored fields %v; want %v", fields, want)
	}
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
