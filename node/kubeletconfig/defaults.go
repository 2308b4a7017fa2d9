package kubeletconfig

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// Profile says whose defaults apply where the kubelet's and actorlet's
// differ.
type Profile int

const (
	// KubeletProfile: the kubelet's defaults, for actorlet started as the
	// kubelet (no subcommand, or under the name kubelet).
	KubeletProfile Profile = iota
	// RunProfile: `actorlet run`, made for many node agents on one host and
	// for tests: the kubelet API on loopback (address 127.0.0.1), no QoS
	// cgroups (cgroupsPerQOS false), cgroup v1 allowed (failCgroupV1
	// false), and port 0 means any free port (see Validate).
	RunProfile
)

// Some of the kubelet's defaults, named for actorlet's other packages.
const (
	DefaultContainerRuntimeEndpoint  = "unix:///run/containerd/containerd.sock"
	DefaultRuntimeRequestTimeout     = 2 * time.Minute
	DefaultHealthzBindAddress        = "127.0.0.1"
	DefaultHealthzPort               = 10248
	DefaultPodLogsDir                = "/var/log/pods"
	DefaultMaxPods                   = 110
	DefaultFileCheckFrequency        = 20 * time.Second
	DefaultSyncFrequency             = time.Minute
	DefaultMaxContainerRestartPeriod = 300 * time.Second
	DefaultNodeStatusUpdateFrequency = 10 * time.Second
	DefaultNodeStatusReportFrequency = 5 * time.Minute
	DefaultKubeAPIQPS                = 50
	DefaultKubeAPIBurst              = 100
	DefaultRegisterNode              = true
	DefaultNodeLeaseDurationSeconds  = 40
	// DefaultResolvConf is the host resolv.conf of Default-policy pods; an
	// explicit resolvConf: "" means none.
	DefaultResolvConf = "/etc/resolv.conf"
	DefaultAddress    = "0.0.0.0"
	DefaultPort       = 10250
	// RunAddress is the kubelet API's address under RunProfile.
	RunAddress = "127.0.0.1"
	// DefaultVolumePluginDir is the kubelet's volumePluginDir.
	DefaultVolumePluginDir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
)

// Defaults returns a KubeletConfiguration with its TypeMeta and every default
// of the profile.
func Defaults(p Profile) *kubeletconfigv1beta1.KubeletConfiguration {
	c := &kubeletconfigv1beta1.KubeletConfiguration{}
	c.APIVersion = kubeletconfigv1beta1.SchemeGroupVersion.String()
	c.Kind = Kind
	SetDefaults(c, p)
	return c
}

// SetDefaults fills the unset fields of c as the kubelet v1.37 defaults a
// kubelet.config.k8s.io/v1beta1 KubeletConfiguration (a zero value is unset,
// except for pointer fields, where only nil is), after the profile's own
// defaults. The feature gates that change defaults are read from c's.
func SetDefaults(c *kubeletconfigv1beta1.KubeletConfiguration, p Profile) {
	if p == RunProfile {
		if c.Address == "" {
			c.Address = RunAddress
		}
		if c.CgroupsPerQOS == nil {
			c.CgroupsPerQOS = ptr.To(false)
		}
		if c.FailCgroupV1 == nil {
			c.FailCgroupV1 = ptr.To(false)
		}
		// Without QoS cgroups there is nothing to enforce allocatable on
		// (the kubelet refuses "pods" then).
		if !*c.CgroupsPerQOS && c.EnforceNodeAllocatable == nil {
			c.EnforceNodeAllocatable = []string{}
		}
	}
	gates := GatesFor(c.FeatureGates)
	dur := func(d *metav1.Duration, def time.Duration) {
		if d.Duration == 0 {
			d.Duration = def
		}
	}
	str := func(s *string, def string) {
		if *s == "" {
			*s = def
		}
	}
	boolean := func(b **bool, def bool) {
		if *b == nil {
			*b = ptr.To(def)
		}
	}
	i32 := func(i **int32, def int32) {
		if *i == nil {
			*i = ptr.To(def)
		}
	}
	nonZero32 := func(i *int32, def int32) {
		if *i == 0 {
			*i = def
		}
	}

	boolean(&c.EnableServer, true)
	dur(&c.SyncFrequency, time.Minute)
	dur(&c.FileCheckFrequency, 20*time.Second)
	dur(&c.HTTPCheckFrequency, 20*time.Second)
	str(&c.Address, DefaultAddress)
	nonZero32(&c.Port, DefaultPort)
	boolean(&c.Authentication.Anonymous.Enabled, false)
	boolean(&c.Authentication.Webhook.Enabled, true)
	dur(&c.Authentication.Webhook.CacheTTL, 2*time.Minute)
	if c.Authorization.Mode == "" {
		c.Authorization.Mode = kubeletconfigv1beta1.KubeletAuthorizationModeWebhook
	}
	dur(&c.Authorization.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	dur(&c.Authorization.Webhook.CacheUnauthorizedTTL, 30*time.Second)
	i32(&c.RegistryPullQPS, 5)
	nonZero32(&c.RegistryBurst, 10)
	i32(&c.EventRecordQPS, 50)
	nonZero32(&c.EventBurst, 100)
	boolean(&c.EnableDebuggingHandlers, true)
	i32(&c.HealthzPort, DefaultHealthzPort)
	str(&c.HealthzBindAddress, DefaultHealthzBindAddress)
	i32(&c.OOMScoreAdj, -999)
	dur(&c.StreamingConnectionIdleTimeout, 4*time.Hour)
	// An explicit update frequency without a report frequency makes the
	// report frequency follow it (the kubelet's backward compatibility).
	if c.NodeStatusReportFrequency.Duration == 0 {
		if c.NodeStatusUpdateFrequency.Duration == 0 {
			c.NodeStatusReportFrequency.Duration = DefaultNodeStatusReportFrequency
		} else {
			c.NodeStatusReportFrequency = c.NodeStatusUpdateFrequency
		}
	}
	dur(&c.NodeStatusUpdateFrequency, DefaultNodeStatusUpdateFrequency)
	nonZero32(&c.NodeLeaseDurationSeconds, DefaultNodeLeaseDurationSeconds)
	dur(&c.ImageMinimumGCAge, 2*time.Minute)
	i32(&c.ImageGCHighThresholdPercent, 85)
	i32(&c.ImageGCLowThresholdPercent, 80)
	dur(&c.VolumeStatsAggPeriod, time.Minute)
	boolean(&c.CgroupsPerQOS, true)
	str(&c.CgroupDriver, "cgroupfs")
	str(&c.CPUManagerPolicy, "none")
	dur(&c.CPUManagerReconcilePeriod, 10*time.Second)
	str(&c.MemoryManagerPolicy, kubeletconfigv1beta1.NoneMemoryManagerPolicy)
	str(&c.TopologyManagerPolicy, kubeletconfigv1beta1.NoneTopologyManagerPolicy)
	str(&c.TopologyManagerScope, kubeletconfigv1beta1.ContainerTopologyManagerScope)
	dur(&c.RuntimeRequestTimeout, DefaultRuntimeRequestTimeout)
	str(&c.HairpinMode, kubeletconfigv1beta1.PromiscuousBridge)
	nonZero32(&c.MaxPods, DefaultMaxPods)
	if c.PodPidsLimit == nil || *c.PodPidsLimit < 0 {
		c.PodPidsLimit = ptr.To[int64](-1)
	}
	if c.ResolverConfig == nil {
		c.ResolverConfig = ptr.To(DefaultResolvConf)
	}
	boolean(&c.CPUCFSQuota, true)
	if c.CPUCFSQuotaPeriod == nil {
		c.CPUCFSQuotaPeriod = &metav1.Duration{Duration: 100 * time.Millisecond}
	}
	i32(&c.NodeStatusMaxImages, 50)
	if c.MaxOpenFiles == 0 {
		c.MaxOpenFiles = 1000000
	}
	str(&c.ContentType, "application/vnd.kubernetes.protobuf")
	i32(&c.KubeAPIQPS, DefaultKubeAPIQPS)
	nonZero32(&c.KubeAPIBurst, DefaultKubeAPIBurst)
	if c.SerializeImagePulls == nil {
		// True unless maxParallelImagePulls asks for parallel pulls.
		c.SerializeImagePulls = ptr.To(c.MaxParallelImagePulls == nil || *c.MaxParallelImagePulls < 2)
	}
	dur(&c.EvictionPressureTransitionPeriod, 5*time.Minute)
	boolean(&c.MergeDefaultEvictionSettings, false)
	boolean(&c.EnableControllerAttachDetach, true)
	boolean(&c.MakeIPTablesUtilChains, true)
	i32(&c.IPTablesMasqueradeBit, 14)
	i32(&c.IPTablesDropBit, 15)
	boolean(&c.FailSwapOn, true)
	str(&c.ContainerLogMaxSize, "10Mi")
	i32(&c.ContainerLogMaxFiles, 5)
	i32(&c.ContainerLogMaxWorkers, 1)
	if c.ContainerLogMonitorInterval == nil {
		c.ContainerLogMonitorInterval = &metav1.Duration{Duration: 10 * time.Second}
	}
	if c.ConfigMapAndSecretChangeDetectionStrategy == "" {
		c.ConfigMapAndSecretChangeDetectionStrategy = kubeletconfigv1beta1.WatchChangeDetectionStrategy
	}
	if c.EnforceNodeAllocatable == nil {
		c.EnforceNodeAllocatable = []string{"pods"}
	}
	str(&c.VolumePluginDir, DefaultVolumePluginDir)
	logsapi.SetRecommendedLoggingConfiguration(&c.Logging)
	boolean(&c.EnableSystemLogHandler, true)
	boolean(&c.EnableProfilingHandler, true)
	boolean(&c.EnableDebugFlagsHandler, true)
	boolean(&c.SeccompDefault, false)
	boolean(&c.FailCgroupV1, true)
	if c.MemoryReservationPolicy == "" {
		c.MemoryReservationPolicy = kubeletconfigv1beta1.NoneMemoryReservationPolicy
	}
	boolean(&c.RegisterNode, DefaultRegisterNode)
	boolean(&c.LocalStorageCapacityIsolation, true)
	str(&c.ContainerRuntimeEndpoint, DefaultContainerRuntimeEndpoint)
	str(&c.PodLogsDir, DefaultPodLogsDir)
	if gates.Enabled("KubeletCrashLoopBackOffMax") && c.CrashLoopBackOff.MaxContainerRestartPeriod == nil {
		c.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: DefaultMaxContainerRestartPeriod}
	}
	if gates.Enabled("KubeletEnsureSecretPulledImages") && c.ImagePullCredentialsVerificationPolicy == "" {
		c.ImagePullCredentialsVerificationPolicy = kubeletconfigv1beta1.NeverVerifyPreloadedImages
	}
}
