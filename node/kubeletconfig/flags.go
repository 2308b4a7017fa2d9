package kubeletconfig

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	// The kubelet registers the JSON log format, which adds the
	// --log-json-* flags.
	_ "k8s.io/component-base/logs/json/register"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// NodeFlags are the kubelet's flags that are not KubeletConfiguration fields:
// what belongs to one node and is never shared through a config file
// (k8s.io/kubernetes cmd/kubelet/app/options.KubeletFlags, v1.37).
type NodeFlags struct {
	KubeConfig          string
	BootstrapKubeconfig string
	HostnameOverride    string
	// NodeIP is one IP or a comma-separated dual-stack pair.
	NodeIP        string
	CertDirectory string
	CloudProvider string
	RootDirectory string
	// ConfigFile is --config, ConfigDir --config-dir (drop-ins).
	ConfigFile     string
	ConfigDir      string
	SeccompDefault bool
	NodeLabels     map[string]string
	LockFilePath   string
	// ExitOnLockContention is --exit-on-lock-contention.
	ExitOnLockContention bool
	// Deprecated in the kubelet: --minimum-container-ttl-duration,
	// --maximum-dead-containers-per-container, --maximum-dead-containers,
	// --experimental-mounter-path, --experimental-allocatable-ignore-eviction.
	MinimumGCAge                          time.Duration
	MaxPerPodContainerCount               int32
	MaxContainerCount                     int32
	ExperimentalMounterPath               string
	ExperimentalAllocatableIgnoreEviction bool
	// Container runtime options.
	RuntimeCgroups                    string
	ImageCredentialProviderConfigPath string
	ImageCredentialProviderBinDir     string
}

// The kubelet's defaults of the node flags.
const (
	DefaultRootDirectory = "/var/lib/kubelet"
	DefaultCertDirectory = "/var/lib/kubelet/pki"
)

// NewNodeFlags returns the node flags with the kubelet's defaults.
func NewNodeFlags() *NodeFlags {
	return &NodeFlags{
		CertDirectory:           DefaultCertDirectory,
		RootDirectory:           DefaultRootDirectory,
		MaxContainerCount:       -1,
		MaxPerPodContainerCount: 1,
		NodeLabels:              map[string]string{},
	}
}

// GlobalFlags are the kubelet's flags that configure the process rather
// than the node: --version, --help, cAdvisor's --housekeeping-interval.
type GlobalFlags struct {
	Version              VersionFlag
	Help                 bool
	HousekeepingInterval time.Duration
}

// ConfigFlagDeprecation is the kubelet's deprecation notice of the flags that
// set a KubeletConfiguration field.
const ConfigFlagDeprecation = "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."

// configFlagsNotDeprecated are the KubeletConfiguration flags the kubelet
// keeps without a deprecation notice.
var configFlagsNotDeprecated = map[string]bool{
	"v": true, "vmodule": true, "log-flush-frequency": true, "provider-id": true, "fail-cgroupv1": true,
}

// AddFlags defines on fs every flag of the kubelet v1.37 (node flags bound to
// f, KubeletConfiguration flags bound to kc, global flags bound to g), with
// the kubelet's names, types and deprecations. Defaults are the current
// values of f, kc and g: apply the defaults first.
func AddFlags(fs *pflag.FlagSet, f *NodeFlags, kc *kubeletconfigv1beta1.KubeletConfiguration, g *GlobalFlags) {
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	f.addFlags(fs)
	AddConfigFlags(fs, kc)
	g.addFlags(fs)
}

func (g *GlobalFlags) addFlags(fs *pflag.FlagSet) {
	fs.Var(&g.Version, "version", "--version, --version=raw prints the version and quits; --version=vX.Y.Z sets the version reported")
	fs.Lookup("version").NoOptDefVal = "true"
	fs.BoolVarP(&g.Help, "help", "h", false, "help for the kubelet")
	fs.DurationVar(&g.HousekeepingInterval, "housekeeping-interval", time.Second, "interval between container housekeepings (cAdvisor's; actorlet has no cAdvisor)")
}

func (f *NodeFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.RuntimeCgroups, "runtime-cgroups", f.RuntimeCgroups, "absolute name of the cgroups to create and run the runtime in")
	fs.StringVar(&f.ImageCredentialProviderConfigPath, "image-credential-provider-config", f.ImageCredentialProviderConfigPath, "credential provider plugin config file or directory")
	fs.StringVar(&f.ImageCredentialProviderBinDir, "image-credential-provider-bin-dir", f.ImageCredentialProviderBinDir, "directory of the credential provider plugin binaries")
	fs.StringVar(&f.ConfigFile, "config", f.ConfigFile, "a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); relative paths in it are relative to its directory. Flags win over it")
	fs.StringVar(&f.ConfigDir, "config-dir", f.ConfigDir, "a directory of drop-in KubeletConfiguration files (*.conf, lexical order, subdirectories included) merged over --config")
	fs.StringVar(&f.KubeConfig, "kubeconfig", f.KubeConfig, "kubeconfig of the node's identity: with it the node joins the cluster, without it it runs standalone")
	fs.StringVar(&f.BootstrapKubeconfig, "bootstrap-kubeconfig", f.BootstrapKubeconfig, "kubeconfig used to obtain a client certificate (CSR) when --kubeconfig is missing or its certificate unusable; the certificate goes to --cert-dir and a kubeconfig using it to --kubeconfig")
	fs.StringVar(&f.HostnameOverride, "hostname-override", f.HostnameOverride, "the node name, instead of the host name")
	fs.StringVar(&f.NodeIP, "node-ip", f.NodeIP, "the node's IP (or a comma-separated dual-stack pair); unset: the address of the default route's interface")
	fs.StringVar(&f.CertDirectory, "cert-dir", f.CertDirectory, "directory of the node's TLS certificates (client certificate, serving certificate); ignored for serving when --tls-cert-file is given")
	fs.StringVar(&f.CloudProvider, "cloud-provider", f.CloudProvider, "cloud provider: empty for none, 'external' for an external one")
	fs.StringVar(&f.RootDirectory, "root-dir", f.RootDirectory, "directory of the node agent's state; actorlet's journal lives there")
	fs.BoolVar(&f.SeccompDefault, "seccomp-default", f.SeccompDefault, "use RuntimeDefault as the default seccomp profile of all workloads")
	fs.Var(cliflag.NewMapStringString(&f.NodeLabels), "node-labels", "labels of the Node when it registers (key=value,...)")
	fs.StringVar(&f.LockFilePath, "lock-file", f.LockFilePath, "<Warning: Alpha feature> a file to lock against other node agents")
	fs.BoolVar(&f.ExitOnLockContention, "exit-on-lock-contention", f.ExitOnLockContention, "exit when another process contends for --lock-file")

	fs.DurationVar(&f.MinimumGCAge, "minimum-container-ttl-duration", f.MinimumGCAge, "minimum age of a finished container before it is garbage collected")
	fs.Int32Var(&f.MaxPerPodContainerCount, "maximum-dead-containers-per-container", f.MaxPerPodContainerCount, "exited instances kept per container")
	fs.Int32Var(&f.MaxContainerCount, "maximum-dead-containers", f.MaxContainerCount, "exited containers kept on the node (negative: no limit)")
	fs.StringVar(&f.ExperimentalMounterPath, "experimental-mounter-path", f.ExperimentalMounterPath, "path of the mounter binary")
	fs.BoolVar(&f.ExperimentalAllocatableIgnoreEviction, "experimental-allocatable-ignore-eviction", f.ExperimentalAllocatableIgnoreEviction, "leave the hard eviction thresholds out of Node Allocatable")
	for name, msg := range map[string]string{
		"minimum-container-ttl-duration":           "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.",
		"maximum-dead-containers-per-container":    "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.",
		"maximum-dead-containers":                  "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.",
		"experimental-mounter-path":                "will be removed in 1.25 or later. in favor of using CSI.",
		"experimental-allocatable-ignore-eviction": "will be removed in 1.25 or later.",
	} {
		fs.Lookup(name).Deprecated = msg
	}
}

// AddConfigFlags defines the flags that set KubeletConfiguration fields,
// bound to kc, each marked deprecated as the kubelet marks them (except
// --v, --vmodule, --log-flush-frequency, --provider-id, --fail-cgroupv1).
func AddConfigFlags(mainfs *pflag.FlagSet, c *kubeletconfigv1beta1.KubeletConfiguration) {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	defer func() {
		fs.VisitAll(func(f *pflag.Flag) {
			if !configFlagsNotDeprecated[f.Name] {
				f.Deprecated = ConfigFlagDeprecation
			}
			// A bare --flag sets a bool, as with pflag's own bools.
			if f.Value.Type() == "bool" {
				f.NoOptDefVal = "true"
			}
		})
		mainfs.AddFlagSet(fs)
	}()

	fs.Var(boolPtr{&c.EnableServer}, "enable-server", "serve the kubelet API")
	fs.Var(boolPtr{&c.FailSwapOn}, "fail-swap-on", "refuse to start when swap is on")
	fs.StringVar(&c.StaticPodPath, "pod-manifest-path", c.StaticPodPath, "directory (or file) of static pod manifests")
	fs.DurationVar(&c.SyncFrequency.Duration, "sync-frequency", c.SyncFrequency.Duration, "longest period between syncs of running containers and their config")
	fs.DurationVar(&c.FileCheckFrequency.Duration, "file-check-frequency", c.FileCheckFrequency.Duration, "period of re-reading the static pod manifests")
	fs.DurationVar(&c.HTTPCheckFrequency.Duration, "http-check-frequency", c.HTTPCheckFrequency.Duration, "period of fetching --manifest-url")
	fs.StringVar(&c.StaticPodURL, "manifest-url", c.StaticPodURL, "URL of more static pod manifests")
	fs.Var(cliflag.NewColonSeparatedMultimapStringString(&c.StaticPodURLHeader), "manifest-url-header", "HTTP headers of --manifest-url requests ('a:hello,b:again'), repeatable")
	fs.Var(ipValue{&c.Address}, "address", "IP address the kubelet API serves on (0.0.0.0 or :: for all)")
	fs.Int32Var(&c.Port, "port", c.Port, "port of the kubelet API")
	fs.Int32Var(&c.ReadOnlyPort, "read-only-port", c.ReadOnlyPort, "port of the unauthenticated read-only API (0: off)")
	fs.Var(boolPtr{&c.FailCgroupV1}, "fail-cgroupv1", "refuse to start on a host with cgroup v1")
	fs.StringVar(&c.ContainerRuntimeEndpoint, "container-runtime-endpoint", c.ContainerRuntimeEndpoint, "the CRI runtime's endpoint (unix:///path)")
	fs.StringVar(&c.ImageServiceEndpoint, "image-service-endpoint", c.ImageServiceEndpoint, "the CRI image service's endpoint (default: the runtime's)")

	fs.Var(boolPtr{&c.Authentication.Anonymous.Enabled}, "anonymous-auth", "let requests no authenticator rejects through as system:anonymous")
	fs.Var(boolPtr{&c.Authentication.Webhook.Enabled}, "authentication-token-webhook", "authenticate bearer tokens with the TokenReview API")
	fs.DurationVar(&c.Authentication.Webhook.CacheTTL.Duration, "authentication-token-webhook-cache-ttl", c.Authentication.Webhook.CacheTTL.Duration, "how long TokenReview answers are cached")
	fs.StringVar(&c.Authentication.X509.ClientCAFile, "client-ca-file", c.Authentication.X509.ClientCAFile, "CA bundle of the client certificates the kubelet API accepts")
	fs.StringVar((*string)(&c.Authorization.Mode), "authorization-mode", string(c.Authorization.Mode), "AlwaysAllow or Webhook (SubjectAccessReview)")
	fs.DurationVar(&c.Authorization.Webhook.CacheAuthorizedTTL.Duration, "authorization-webhook-cache-authorized-ttl", c.Authorization.Webhook.CacheAuthorizedTTL.Duration, "how long allowing SubjectAccessReview answers are cached")
	fs.DurationVar(&c.Authorization.Webhook.CacheUnauthorizedTTL.Duration, "authorization-webhook-cache-unauthorized-ttl", c.Authorization.Webhook.CacheUnauthorizedTTL.Duration, "how long denying SubjectAccessReview answers are cached")

	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "the kubelet API's serving certificate (with its chain); none: a self-signed one in --cert-dir")
	fs.StringVar(&c.TLSPrivateKeyFile, "tls-private-key-file", c.TLSPrivateKeyFile, "the serving certificate's key")
	fs.BoolVar(&c.ServerTLSBootstrap, "rotate-server-certificates", c.ServerTLSBootstrap, "request the serving certificate from the API server (kubernetes.io/kubelet-serving CSR) and renew it before it expires")
	fs.StringSliceVar(&c.TLSCipherSuites, "tls-cipher-suites", c.TLSCipherSuites, "cipher suites of the kubelet API (default: Go's)")
	fs.StringVar(&c.TLSMinVersion, "tls-min-version", c.TLSMinVersion, "minimum TLS version of the kubelet API (VersionTLS12, VersionTLS13)")
	fs.BoolVar(&c.RotateCertificates, "rotate-certificates", c.RotateCertificates, "renew the client certificate through the API server before it expires")

	fs.Var(int32Ptr{&c.RegistryPullQPS}, "registry-qps", "image pull QPS limit (0: none)")
	fs.Int32Var(&c.RegistryBurst, "registry-burst", c.RegistryBurst, "image pull burst")
	fs.Var(int32Ptr{&c.EventRecordQPS}, "event-qps", "event creation QPS limit (0: none)")
	fs.Int32Var(&c.EventBurst, "event-burst", c.EventBurst, "event creation burst")

	fs.Var(boolPtr{&c.EnableDebuggingHandlers}, "enable-debugging-handlers", "serve logs, exec, attach and port-forward")
	fs.BoolVar(&c.EnableContentionProfiling, "contention-profiling", c.EnableContentionProfiling, "block profiling, with profiling on")
	fs.Var(int32Ptr{&c.HealthzPort}, "healthz-port", "port of the localhost healthz endpoint (0: off)")
	fs.Var(ipValue{&c.HealthzBindAddress}, "healthz-bind-address", "IP address of the healthz endpoint")
	fs.Var(int32Ptr{&c.OOMScoreAdj}, "oom-score-adj", "oom_score_adj of the node agent's process (-1000..1000)")
	fs.StringVar(&c.ClusterDomain, "cluster-domain", c.ClusterDomain, "the cluster's DNS domain, searched by ClusterFirst pods")

	fs.StringVar(&c.VolumePluginDir, "volume-plugin-dir", c.VolumePluginDir, "directory of third-party volume plugins")
	fs.StringSliceVar(&c.ClusterDNS, "cluster-dns", c.ClusterDNS, "DNS server IPs of ClusterFirst pods, comma-separated")
	fs.DurationVar(&c.StreamingConnectionIdleTimeout.Duration, "streaming-connection-idle-timeout", c.StreamingConnectionIdleTimeout.Duration, "idle time after which a streaming connection is closed (0: never)")
	fs.DurationVar(&c.NodeStatusUpdateFrequency.Duration, "node-status-update-frequency", c.NodeStatusUpdateFrequency.Duration, "how often the node status is computed and sent when it changed")
	fs.DurationVar(&c.ImageMinimumGCAge.Duration, "minimum-image-ttl-duration", c.ImageMinimumGCAge.Duration, "least age of an unused image before it is garbage collected")
	fs.Var(int32Ptr{&c.ImageGCHighThresholdPercent}, "image-gc-high-threshold", "image filesystem usage (percent) at which image garbage collection always runs")
	fs.Var(int32Ptr{&c.ImageGCLowThresholdPercent}, "image-gc-low-threshold", "image filesystem usage (percent) image garbage collection frees down to")
	fs.DurationVar(&c.VolumeStatsAggPeriod.Duration, "volume-stats-agg-period", c.VolumeStatsAggPeriod.Duration, "period of computing volume disk usage (negative: off)")
	fs.Var(cliflag.NewMapStringBool(&c.FeatureGates), "feature-gates", "feature gates, key=value pairs (the kubelet v1.37's gates)")
	fs.StringVar(&c.KubeletCgroups, "kubelet-cgroups", c.KubeletCgroups, "absolute name of the cgroups to run the node agent in")
	fs.StringVar(&c.SystemCgroups, "system-cgroups", c.SystemCgroups, "absolute name of the cgroups for non-kernel processes not in a cgroup under /")

	fs.StringVar(&c.ProviderID, "provider-id", c.ProviderID, "the node's ID in the machine database (cloud provider)")

	fs.Var(boolPtr{&c.CgroupsPerQOS}, "cgroups-per-qos", "create the QoS and pod cgroup hierarchy")
	fs.StringVar(&c.CgroupDriver, "cgroup-driver", c.CgroupDriver, "cgroupfs or systemd; a runtime that answers the CRI RuntimeConfig call decides instead")
	fs.StringVar(&c.CgroupRoot, "cgroup-root", c.CgroupRoot, "root cgroup of the pods (default: the runtime's)")
	fs.StringVar(&c.CPUManagerPolicy, "cpu-manager-policy", c.CPUManagerPolicy, "CPU manager policy: none or static")
	fs.Var(cliflag.NewMapStringStringNoSplit(&c.CPUManagerPolicyOptions), "cpu-manager-policy-options", "CPU manager policy options, key=value")
	fs.DurationVar(&c.CPUManagerReconcilePeriod.Duration, "cpu-manager-reconcile-period", c.CPUManagerReconcilePeriod.Duration, "<Warning: Alpha feature> CPU manager reconcile period")
	fs.Var(cliflag.NewMapStringString(&c.QOSReserved), "qos-reserved", "<Warning: Alpha feature> resource percentages reserved per QoS level (memory=50%)")
	fs.StringVar(&c.TopologyManagerPolicy, "topology-manager-policy", c.TopologyManagerPolicy, "none, best-effort, restricted or single-numa-node")
	fs.DurationVar(&c.RuntimeRequestTimeout.Duration, "runtime-request-timeout", c.RuntimeRequestTimeout.Duration, "timeout of each CRI call except long-running ones (pull, logs, exec, attach)")
	fs.StringVar(&c.HairpinMode, "hairpin-mode", c.HairpinMode, "promiscuous-bridge, hairpin-veth or none")
	fs.Int32Var(&c.MaxPods, "max-pods", c.MaxPods, "pods this node runs at most")

	fs.StringVar(&c.PodCIDR, "pod-cidr", c.PodCIDR, "pod CIDR in standalone mode")
	fs.Var(int64Ptr{&c.PodPidsLimit}, "pod-max-pids", "maximum processes per pod (-1: node allocatable)")

	fs.Var(stringPtr{&c.ResolverConfig}, "resolv-conf", "the resolv.conf pods' DNS configuration starts from")

	fs.BoolVar(&c.RunOnce, "runonce", c.RunOnce, "exit after starting the static pods (not supported)")

	fs.Var(boolPtr{&c.CPUCFSQuota}, "cpu-cfs-quota", "enforce CPU limits with the CFS quota")
	fs.Var(durationPtr{&c.CPUCFSQuotaPeriod}, "cpu-cfs-quota-period", "CFS quota period (needs the CustomCPUCFSQuotaPeriod gate to differ from 100ms)")

	fs.Var(boolPtr{&c.EnableControllerAttachDetach}, "enable-controller-attach-detach", "let the attach/detach controller manage this node's volumes")
	fs.Var(boolPtr{&c.MakeIPTablesUtilChains}, "make-iptables-util-chains", "ensure the iptables utility chains")
	fs.StringVar(&c.ContainerLogMaxSize, "container-log-max-size", c.ContainerLogMaxSize, "a container's log is rotated once it reaches this size")
	fs.Var(int32Ptr{&c.ContainerLogMaxFiles}, "container-log-max-files", "log files kept per container (at least 2)")
	fs.StringSliceVar(&c.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", c.AllowedUnsafeSysctls, "unsafe sysctls (or patterns ending in *) pods may set")

	fs.Var(int32Ptr{&c.NodeStatusMaxImages}, "node-status-max-images", "images reported in Node.Status.Images (-1: all)")
	fs.BoolVar(&c.KernelMemcgNotification, "kernel-memcg-notification", c.KernelMemcgNotification, "use memcg notifications for memory eviction thresholds")
	fs.Var(boolPtr{&c.LocalStorageCapacityIsolation}, "local-storage-capacity-isolation", "isolate local ephemeral storage")

	fs.Int64Var(&c.MaxOpenFiles, "max-open-files", c.MaxOpenFiles, "open files limit of the node agent's process")

	fs.StringVar(&c.ContentType, "kube-api-content-type", c.ContentType, "content type of requests to the API server")
	fs.Var(int32Ptr{&c.KubeAPIQPS}, "kube-api-qps", "API requests per second (0: the default 50)")
	fs.Int32Var(&c.KubeAPIBurst, "kube-api-burst", c.KubeAPIBurst, "API request burst (0: the default 100)")
	fs.Var(boolPtr{&c.SerializeImagePulls}, "serialize-image-pulls", "pull one image at a time")

	fs.Var(evictionHardValue{cliflag.NewLangleSeparatedMapStringString(&c.EvictionHard), &c.EvictionHard}, "eviction-hard", "hard eviction thresholds (memory.available<1Gi,...); none (actorlet's): no hard thresholds")
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&c.EvictionSoft), "eviction-soft", "soft eviction thresholds (memory.available<1.5Gi,...)")
	fs.Var(cliflag.NewMapStringString(&c.EvictionSoftGracePeriod), "eviction-soft-grace-period", "grace periods of the soft thresholds (memory.available=1m30s,...)")
	fs.DurationVar(&c.EvictionPressureTransitionPeriod.Duration, "eviction-pressure-transition-period", c.EvictionPressureTransitionPeriod.Duration, "how long a pressure condition stays after its threshold is no longer met")
	fs.Int32Var(&c.EvictionMaxPodGracePeriod, "eviction-max-pod-grace-period", c.EvictionMaxPodGracePeriod, "longest grace period of a pod evicted on a soft threshold (negative: the pod's)")
	fs.Var(cliflag.NewMapStringString(&c.EvictionMinimumReclaim), "eviction-minimum-reclaim", "least amount reclaimed per signal (imagefs.available=2Gi,...)")
	fs.Int32Var(&c.PodsPerCore, "pods-per-core", c.PodsPerCore, "pods per core (0: no limit)")
	fs.BoolVar(&c.ProtectKernelDefaults, "protect-kernel-defaults", c.ProtectKernelDefaults, "fail when kernel tunables differ from the kubelet's defaults")
	fs.StringVar(&c.ReservedSystemCPUs, "reserved-cpus", c.ReservedSystemCPUs, "CPUs reserved for the system and Kubernetes")
	fs.StringVar(&c.TopologyManagerScope, "topology-manager-scope", c.TopologyManagerScope, "container or pod")
	fs.Var(cliflag.NewMapStringString(&c.TopologyManagerPolicyOptions), "topology-manager-policy-options", "topology manager policy options, key=value")
	fs.Var(cliflag.NewMapStringString(&c.SystemReserved), "system-reserved", "resources reserved for the system (cpu=200m,memory=500Mi,...)")
	fs.Var(cliflag.NewMapStringString(&c.KubeReserved), "kube-reserved", "resources reserved for Kubernetes components (cpu=200m,memory=500Mi,...)")
	fs.StringSliceVar(&c.EnforceNodeAllocatable, "enforce-node-allocatable", c.EnforceNodeAllocatable, "node allocatable enforcement levels: none, pods, system-reserved, system-reserved-compressible, kube-reserved, kube-reserved-compressible")
	fs.StringVar(&c.SystemReservedCgroup, "system-reserved-cgroup", c.SystemReservedCgroup, "top-level cgroup of the system's reserved resources")
	fs.StringVar(&c.KubeReservedCgroup, "kube-reserved-cgroup", c.KubeReservedCgroup, "top-level cgroup of the Kubernetes components' reserved resources")
	logsapi.AddFlags(&c.Logging, fs)

	fs.StringVar(&c.MemoryManagerPolicy, "memory-manager-policy", c.MemoryManagerPolicy, "memory manager policy: None or Static")
	fs.Var(&reservedMemoryValue{p: &c.ReservedMemory}, "reserved-memory", "memory reserved per NUMA node (0:memory=1Gi,hugepages-1M=2Gi), repeatable")

	fs.Var(boolPtr{&c.RegisterNode}, "register-node", "register the Node with the API server (with --kubeconfig)")
	fs.Var(taintsValue{&c.RegisterWithTaints}, "register-with-taints", "taints of the Node when it registers (key=value:Effect,...)")
}

// VersionFlag is --version: false, true, raw, or a version (vX.Y.Z) to
// report.
type VersionFlag string

func (v *VersionFlag) Set(s string) error {
	switch s {
	case "raw", "true", "false":
		*v = VersionFlag(s)
		return nil
	}
	if len(s) > 1 && s[0] == 'v' {
		*v = VersionFlag(s)
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if b {
		*v = "true"
	} else {
		*v = "false"
	}
	return nil
}
func (v *VersionFlag) String() string {
	if *v == "" {
		return "false"
	}
	return string(*v)
}
func (v *VersionFlag) Type() string     { return "version" }
func (v *VersionFlag) IsBoolFlag() bool { return true }

// evictionHardValue is the kubelet's --eviction-hard, which also takes
// "none" (actorlet's): no hard thresholds, as an empty map in a file.
type evictionHardValue struct {
	*cliflag.LangleSeparatedMapStringString
	p *map[string]string
}

func (v evictionHardValue) Set(s string) error {
	if s == "none" {
		*v.p = map[string]string{}
		return nil
	}
	return v.LangleSeparatedMapStringString.Set(s)
}
