package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/imagegc"
	"github.com/actorlet/actorlet/node/kubeletconfig"
	"github.com/actorlet/actorlet/node/logrotate"
)

// runOptions are the flags of `actorlet run`, named like the kubelet's.
type runOptions struct {
	log                 logOptions
	configFile          string
	runtimeEndpoint     string
	imageEndpoint       string
	runtimeTimeout      time.Duration
	podManifestPath     string
	rootDir             string
	hostnameOverride    string
	nodeIP              string
	healthzBindAddress  string
	healthzPort         int32
	podLogsDir          string
	clusterDNS          []string
	clusterDomain       string
	resolvConf          string
	fileCheckFrequency  time.Duration
	backoffInitial      time.Duration
	backoffMax          time.Duration
	relistPeriod        time.Duration
	simPodCIDR          string
	simLatency          string
	shutdownGracePeriod time.Duration
	imageGC             imagegc.Policy
	syncFrequency       time.Duration
	maxDeadPerContainer int
	evictionHard        string
	evictionKC          kubeletconfigv1beta1.KubeletConfiguration // its eviction fields, from --config
	eviction            eviction.Config
	logRotation         logrotate.Policy
	logMaxSize          string
	cgroupsPerQOS       bool
	cgroupRoot          string
	cluster             clusterOptions
}

func newRunCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node agent",
		Long: `Run the node agent: take the static pods of --pod-manifest-path, run them through the CRI
runtime at --container-runtime-endpoint (sim:// for the in-process simulated runtime), journal
every decision under --root-dir and serve /healthz, /pods and /metrics on the healthz port.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.resolve(cmd.Flags())
			if err != nil {
				return err
			}
			return runNode(cmd.Context(), cfg)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags defines the flags of `actorlet run` on fs, bound to o.
func (o *runOptions) addFlags(fs *pflag.FlagSet) {
	o.log.addFlags(fs)
	fs.StringVar(&o.configFile, "config", "", "a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags override it")
	fs.StringVar(&o.runtimeEndpoint, "container-runtime-endpoint", kubeletconfig.DefaultContainerRuntimeEndpoint, "the CRI runtime's endpoint: unix:///path, or sim:// for the in-process simulated runtime")
	fs.StringVar(&o.imageEndpoint, "image-service-endpoint", "", "the CRI image service's endpoint (default: the runtime endpoint)")
	fs.DurationVar(&o.runtimeTimeout, "runtime-request-timeout", kubeletconfig.DefaultRuntimeRequestTimeout, "timeout of each CRI call except long-running ones")
	fs.StringVar(&o.podManifestPath, "pod-manifest-path", "", "directory of static pod manifests (YAML or JSON)")
	fs.StringVar(&o.rootDir, "root-dir", "/var/lib/actorlet", "directory of actorlet's state; the journal lives there")
	fs.StringVar(&o.hostnameOverride, "hostname-override", "", "the node name, instead of the host name")
	fs.StringVar(&o.nodeIP, "node-ip", "127.0.0.1", "the node's IP: pod statuses' hostIP, and the IP of hostNetwork pods")
	fs.StringVar(&o.healthzBindAddress, "healthz-bind-address", kubeletconfig.DefaultHealthzBindAddress, "address of the healthz/pods/metrics server")
	fs.Int32Var(&o.healthzPort, "healthz-port", kubeletconfig.DefaultHealthzPort, "port of the healthz/pods/metrics server (0: any free port)")
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", kubeletconfig.DefaultPodLogsDir, "where container logs go (<dir>/<ns>_<name>_<uid>/<container>/<n>.log)")
	fs.StringSliceVar(&o.clusterDNS, "cluster-dns", nil, "comma-separated DNS server IPs of ClusterFirst pods (none: they fall back to the Default policy)")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "", "the cluster's DNS domain, e.g. cluster.local: ClusterFirst pods search it")
	fs.StringVar(&o.resolvConf, "resolv-conf", kubeletconfig.DefaultResolvConf, "the host resolv.conf of Default-policy pods (\"\": none)")
	fs.DurationVar(&o.fileCheckFrequency, "file-check-frequency", kubeletconfig.DefaultFileCheckFrequency, "how often the manifest directory is re-read besides watching it")
	fs.DurationVar(&o.backoffInitial, "crashloop-backoff-initial", 10*time.Second, "delay before the second restart of a crashing container (then doubling)")
	fs.DurationVar(&o.backoffMax, "crashloop-backoff-max", kubeletconfig.DefaultMaxContainerRestartPeriod, "the longest crash-loop back-off (crashLoopBackOff.maxContainerRestartPeriod)")
	fs.DurationVar(&o.relistPeriod, "relist-period", time.Second, "how often the runtime is listed when it does not serve container events")
	fs.StringVar(&o.simPodCIDR, "sim-pod-cidr", "10.88.0.0/16", "with sim://: the CIDR pod IPs come from")
	fs.StringVar(&o.simLatency, "sim-latency", "", "with sim://: per-RPC latency, e.g. RunPodSandbox=50ms,PullImage=200ms")
	fs.StringVar(&o.evictionHard, "eviction-hard", "", `hard eviction thresholds, e.g. "memory.available<100Mi,nodefs.available<10%" (default: the kubelet's); "none" turns eviction off`)
	fs.StringVar(&o.logMaxSize, "container-log-max-size", "10Mi", "a container's log is rotated once it reaches this size (-1: never)")
	fs.IntVar(&o.logRotation.MaxFiles, "container-log-max-files", logrotate.DefaultMaxFiles, "log files kept per container, the current one included")
	fs.DurationVar(&o.logRotation.MonitorInterval, "container-log-monitor-interval", logrotate.DefaultMonitorInterval, "how often container logs are checked for rotation")
	fs.BoolVar(&o.cgroupsPerQOS, "cgroups-per-qos", false, "put each pod in a cgroup <cgroup-root>/kubepods/<qos>/pod<uid> (cgroupfs driver; the kubelet's default is true, actorlet's false: it may share the host with other node agents)")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "/", "the cgroup the kubepods hierarchy goes under, with --cgroups-per-qos")
	fs.IntVar(&o.maxDeadPerContainer, "maximum-dead-containers-per-container", 1, "how many exited instances of each container are kept for inspection (lastState, logs --previous)")
	fs.DurationVar(&o.syncFrequency, "sync-frequency", time.Minute, "how often running pods' ConfigMap, Secret, downward API and token volumes are brought up to date")
	fs.IntVar(&o.imageGC.HighThresholdPercent, "image-gc-high-threshold", imagegc.DefaultHighThresholdPercent, "image filesystem usage (percent) at which unused images are removed")
	fs.IntVar(&o.imageGC.LowThresholdPercent, "image-gc-low-threshold", imagegc.DefaultLowThresholdPercent, "image filesystem usage (percent) image removal frees down to")
	fs.DurationVar(&o.imageGC.MinAge, "minimum-image-ttl-duration", imagegc.DefaultMinAge, "the least time an unused image is kept")
	o.cluster.addFlags(fs)
	fs.DurationVar(&o.shutdownGracePeriod, "shutdown-grace-period", 10*time.Second, "how long to wait for in-flight work on SIGTERM (pods keep running)")
}

// nodeConfig is the resolved configuration of one node.
type nodeConfig struct {
	runOptions
	nodeName string
	ignored  []string
}

// resolve merges the config file and the flags: a flag given on the command
// line wins, as with the kubelet.
func (o *runOptions) resolve(fs *pflag.FlagSet) (*nodeConfig, error) {
	nc := &nodeConfig{runOptions: *o}
	if o.configFile != "" {
		kc, ignored, err := kubeletconfig.Load(o.configFile)
		if err != nil {
			return nil, err
		}
		nc.ignored = ignored
		apply := func(flag string, set func()) {
			if !fs.Changed(flag) {
				set()
			}
		}
		apply("container-runtime-endpoint", func() { nc.runtimeEndpoint = kc.ContainerRuntimeEndpoint })
		apply("image-service-endpoint", func() { nc.imageEndpoint = kc.ImageServiceEndpoint })
		apply("runtime-request-timeout", func() { nc.runtimeTimeout = kc.RuntimeRequestTimeout.Duration })
		apply("pod-manifest-path", func() { nc.podManifestPath = kc.StaticPodPath })
		apply("healthz-bind-address", func() { nc.healthzBindAddress = kc.HealthzBindAddress })
		apply("healthz-port", func() {
			if kc.HealthzPort != nil {
				nc.healthzPort = *kc.HealthzPort
			}
		})
		apply("pod-logs-dir", func() { nc.podLogsDir = kc.PodLogsDir })
		apply("cluster-dns", func() { nc.clusterDNS = kc.ClusterDNS })
		apply("cluster-domain", func() { nc.clusterDomain = kc.ClusterDomain })
		apply("resolv-conf", func() { nc.resolvConf = *kc.ResolverConfig })
		apply("file-check-frequency", func() { nc.fileCheckFrequency = kc.FileCheckFrequency.Duration })
		apply("crashloop-backoff-max", func() { nc.backoffMax = maxRestartPeriod(kc) })
		apply("register-node", func() { nc.cluster.registerNode = *kc.RegisterNode })
		apply("register-with-taints", func() {
			nc.cluster.taints = nil
			for _, t := range kc.RegisterWithTaints {
				nc.cluster.taints = append(nc.cluster.taints, taintSpec(t))
			}
		})
		apply("max-pods", func() { nc.cluster.maxPods = kc.MaxPods })
		apply("node-status-update-frequency", func() { nc.cluster.statusUpdate = kc.NodeStatusUpdateFrequency.Duration })
		apply("node-status-report-frequency", func() { nc.cluster.statusReport = kc.NodeStatusReportFrequency.Duration })
		apply("node-lease-duration-seconds", func() { nc.cluster.leaseSeconds = kc.NodeLeaseDurationSeconds })
		apply("kube-api-qps", func() { nc.cluster.qps = float32(*kc.KubeAPIQPS) })
		apply("kube-api-burst", func() { nc.cluster.burst = kc.KubeAPIBurst })
		apply("port", func() {
			if kc.Port != 0 {
				nc.cluster.port = kc.Port
			}
		})
		apply("address", func() {
			if kc.Address != "" {
				nc.cluster.address = kc.Address
			}
		})
		apply("tls-cert-file", func() { nc.cluster.tlsCertFile = kc.TLSCertFile })
		apply("tls-private-key-file", func() { nc.cluster.tlsKeyFile = kc.TLSPrivateKeyFile })
		apply("client-ca-file", func() { nc.cluster.clientCAFile = kc.Authentication.X509.ClientCAFile })
		apply("anonymous-auth", func() {
			if kc.Authentication.Anonymous.Enabled != nil {
				nc.cluster.anonymousAuth = *kc.Authentication.Anonymous.Enabled
			}
		})
		apply("image-gc-high-threshold", func() {
			if kc.ImageGCHighThresholdPercent != nil {
				nc.imageGC.HighThresholdPercent = int(*kc.ImageGCHighThresholdPercent)
			}
		})
		apply("image-gc-low-threshold", func() {
			if kc.ImageGCLowThresholdPercent != nil {
				nc.imageGC.LowThresholdPercent = int(*kc.ImageGCLowThresholdPercent)
			}
		})
		apply("minimum-image-ttl-duration", func() {
			if kc.ImageMinimumGCAge.Duration != 0 {
				nc.imageGC.MinAge = kc.ImageMinimumGCAge.Duration
			}
		})
		nc.imageGC.MaxAge = kc.ImageMaximumGCAge.Duration
		nc.evictionKC = kubeletconfigv1beta1.KubeletConfiguration{
			EvictionHard: kc.EvictionHard, EvictionSoft: kc.EvictionSoft, EvictionSoftGracePeriod: kc.EvictionSoftGracePeriod,
			EvictionMinimumReclaim: kc.EvictionMinimumReclaim, EvictionPressureTransitionPeriod: kc.EvictionPressureTransitionPeriod,
			EvictionMaxPodGracePeriod: kc.EvictionMaxPodGracePeriod, MergeDefaultEvictionSettings: kc.MergeDefaultEvictionSettings,
		}
		apply("cgroups-per-qos", func() {
			if kc.CgroupsPerQOS != nil {
				nc.cgroupsPerQOS = *kc.CgroupsPerQOS
			}
		})
		apply("cgroup-root", func() {
			if kc.CgroupRoot != "" {
				nc.cgroupRoot = kc.CgroupRoot
			}
		})
		apply("container-log-max-size", func() {
			if kc.ContainerLogMaxSize != "" {
				nc.logMaxSize = kc.ContainerLogMaxSize
			}
		})
		apply("container-log-max-files", func() {
			if kc.ContainerLogMaxFiles != nil {
				nc.logRotation.MaxFiles = int(*kc.ContainerLogMaxFiles)
			}
		})
		apply("container-log-monitor-interval", func() {
			if kc.ContainerLogMonitorInterval != nil {
				nc.logRotation.MonitorInterval = kc.ContainerLogMonitorInterval.Duration
			}
		})
		apply("sync-frequency", func() {
			if kc.SyncFrequency.Duration != 0 {
				nc.syncFrequency = kc.SyncFrequency.Duration
			}
		})
	}
	if nc.evictionHard != "" && nc.evictionHard != "none" {
		hard, err := parseEvictionHard(nc.evictionHard)
		if err != nil {
			return nil, err
		}
		nc.evictionKC.EvictionHard = hard
	}
	if nc.evictionHard != "none" {
		cfg, err := eviction.ParseConfig(&nc.evictionKC)
		if err != nil {
			return nil, fmt.Errorf("eviction: %w", err)
		}
		nc.eviction = cfg
	}
	size, err := logrotate.ParseMaxSize(nc.logMaxSize)
	if err != nil {
		return nil, fmt.Errorf("--container-log-max-size: %w", err)
	}
	nc.logRotation.MaxSize = size
	if nc.logRotation.MaxWorkers == 0 {
		nc.logRotation.MaxWorkers = logrotate.DefaultMaxWorkers
	}
	if err := nc.logRotation.Validate(); err != nil {
		return nil, fmt.Errorf("container log rotation: %w", err)
	}
	if err := nc.imageGC.Validate(); err != nil {
		return nil, fmt.Errorf("image garbage collection: %w", err)
	}
	if nc.imageEndpoint == "" {
		nc.imageEndpoint = nc.runtimeEndpoint
	}
	name := nc.hostnameOverride
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("node name: %w (set --hostname-override)", err)
		}
		name = h
	}
	nc.nodeName = strings.ToLower(strings.TrimSpace(name))
	for _, ip := range nc.clusterDNS {
		if net.ParseIP(ip) == nil {
			return nil, fmt.Errorf("--cluster-dns %q is not an IP address", ip)
		}
	}
	switch {
	case net.ParseIP(nc.nodeIP) == nil:
		return nil, fmt.Errorf("--node-ip %q is not an IP address", nc.nodeIP)
	case nc.rootDir == "":
		return nil, errors.New("--root-dir must not be empty")
	case nc.maxDeadPerContainer < 0:
		return nil, fmt.Errorf("--maximum-dead-containers-per-container %d must not be negative", nc.maxDeadPerContainer)
	case nc.syncFrequency <= 0:
		return nil, fmt.Errorf("--sync-frequency %s must be positive", nc.syncFrequency)
	case nc.runtimeTimeout <= 0:
		return nil, fmt.Errorf("--runtime-request-timeout %s must be positive", nc.runtimeTimeout)
	case nc.backoffInitial <= 0 || nc.backoffMax < nc.backoffInitial:
		return nil, fmt.Errorf("crash-loop back-off %s..%s is not a valid range", nc.backoffInitial, nc.backoffMax)
	}
	return nc, nil
}

func maxRestartPeriod(kc *kubeletconfigv1beta1.KubeletConfiguration) time.Duration {
	if kc.CrashLoopBackOff.MaxContainerRestartPeriod != nil {
		return kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration
	}
	return kubeletconfig.DefaultMaxContainerRestartPeriod
}

// parseLatency reads "Method=dur,Method=dur".
func parseLatency(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("latency %q: want Method=duration", kv)
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("latency of %s: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}

// parseEvictionHard reads --eviction-hard: comma-separated
// "<signal><<quantity or percentage>" (the kubelet's flag form).
func parseEvictionHard(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		sig, val, ok := strings.Cut(strings.TrimSpace(part), "<")
		if !ok || sig == "" || val == "" {
			return nil, fmt.Errorf("--eviction-hard %q: %q is not <signal><<value>", s, part)
		}
		out[sig] = val
	}
	return out, nil
}
