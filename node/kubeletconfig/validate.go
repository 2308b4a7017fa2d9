package kubeletconfig

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/metrics"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"
)

// Validate checks a defaulted configuration with the kubelet v1.37's rules
// (its ValidateKubeletConfiguration, with the same messages), against the
// feature gates it sets, plus what actorlet needs of the values the kubelet
// only parses later (addresses, cluster DNS, durations). cgroupV1 says whether
// the host runs cgroup v1 (failCgroupV1). Under RunProfile, port 0 is valid
// (any free port). The result aggregates every problem found.
func Validate(kc *kubeletconfigv1beta1.KubeletConfiguration, p Profile, cgroupV1 bool) error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	if err := ValidateGates(kc.FeatureGates); err != nil {
		errs = append(errs, err)
	}
	gates := GatesFor(kc.FeatureGates)
	on := func(name string) bool { return gates.Enabled(featuregate.Feature(name)) }
	i32 := func(p *int32) int32 { return ptr.Deref(p, 0) }

	if kc.NodeLeaseDurationSeconds <= 0 {
		add("nodeLeaseDurationSeconds must be greater than 0")
	}
	if kc.SystemCgroups != "" && kc.CgroupRoot == "" {
		add("systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified")
	}
	if kc.EventBurst < 0 {
		add("eventBurst (--event-burst) %v must not be a negative number", kc.EventBurst)
	}
	if i32(kc.EventRecordQPS) < 0 {
		add("eventRecordQPS (--event-qps) %v must not be a negative number", i32(kc.EventRecordQPS))
	}
	if hp := i32(kc.HealthzPort); hp != 0 && validation.IsValidPortNum(int(hp)) != nil {
		add("healthzPort (--healthz-port) %v must be between 1 and 65535, inclusive", hp)
	}
	period := ptr.Deref(kc.CPUCFSQuotaPeriod, metav1.Duration{Duration: 100 * time.Millisecond}).Duration
	if !on("CustomCPUCFSQuotaPeriod") && period != 100*time.Millisecond {
		add("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v requires feature gate CustomCPUCFSQuotaPeriod", period)
	}
	if on("CustomCPUCFSQuotaPeriod") && (period < time.Millisecond || period > time.Second) {
		add("cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", period)
	}
	high, low := i32(kc.ImageGCHighThresholdPercent), i32(kc.ImageGCLowThresholdPercent)
	if high < 0 || high > 100 {
		add("imageGCHighThresholdPercent (--image-gc-high-threshold) %v must be between 0 and 100, inclusive", high)
	}
	if low < 0 || low > 100 {
		add("imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be between 0 and 100, inclusive", low)
	}
	if low >= high {
		add("imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %v", low, high)
	}
	if kc.ImageMaximumGCAge.Duration != 0 && !on("ImageMaximumGCAge") {
		add("ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge")
	}
	errs = append(errs, validateDefaultPodSysctls(kc.DefaultPodSysctls, on("DefaultPodSysctls"))...)
	if kc.ImageMinimumGCAge.Duration < 0 {
		add("imageMinimumGCAge %v must not be negative", kc.ImageMinimumGCAge.Duration)
	}
	if kc.ImageMaximumGCAge.Duration < 0 {
		add("imageMaximumGCAge %v must not be negative", kc.ImageMaximumGCAge.Duration)
	}
	if kc.ImageMaximumGCAge.Duration > 0 && kc.ImageMaximumGCAge.Duration <= kc.ImageMinimumGCAge.Duration {
		add("imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", kc.ImageMaximumGCAge.Duration, kc.ImageMinimumGCAge.Duration)
	}
	if b := i32(kc.IPTablesDropBit); b < 0 || b > 31 {
		add("iptablesDropBit (--iptables-drop-bit) %v must be between 0 and 31, inclusive", b)
	}
	if b := i32(kc.IPTablesMasqueradeBit); b < 0 || b > 31 {
		add("iptablesMasqueradeBit (--iptables-masquerade-bit) %v must be between 0 and 31, inclusive", b)
	}
	if kc.KubeAPIBurst < 0 {
		add("kubeAPIBurst (--kube-api-burst) %v must not be a negative number", kc.KubeAPIBurst)
	}
	if i32(kc.KubeAPIQPS) < 0 {
		add("kubeAPIQPS (--kube-api-qps) %v must not be a negative number", i32(kc.KubeAPIQPS))
	}
	if n := i32(kc.NodeStatusMaxImages); n < -1 {
		add("nodeStatusMaxImages (--node-status-max-images) %v must be -1 or greater", n)
	}
	if kc.MaxOpenFiles < 0 {
		add("maxOpenFiles (--max-open-files) %v must not be a negative number", kc.MaxOpenFiles)
	}
	if kc.MaxPods < 0 {
		add("maxPods (--max-pods) %v must not be a negative number", kc.MaxPods)
	}
	if o := i32(kc.OOMScoreAdj); o < -1000 || o > 1000 {
		add("oomScoreAdj (--oom-score-adj) %v must be between -1000 and 1000, inclusive", o)
	}
	if kc.PodsPerCore < 0 {
		add("podsPerCore (--pods-per-core) %v must not be a negative number", kc.PodsPerCore)
	}
	if validation.IsValidPortNum(int(kc.Port)) != nil && (p != RunProfile || kc.Port != 0) {
		add("port (--port) %v must be between 1 and 65535, inclusive", kc.Port)
	}
	if kc.ReadOnlyPort != 0 && validation.IsValidPortNum(int(kc.ReadOnlyPort)) != nil {
		add("readOnlyPort (--read-only-port) %v must be between 0 and 65535, inclusive", kc.ReadOnlyPort)
	}
	if kc.RegistryBurst < 0 {
		add("registryBurst (--registry-burst) %v must not be a negative number", kc.RegistryBurst)
	}
	if i32(kc.RegistryPullQPS) < 0 {
		add("registryPullQPS (--registry-qps) %v must not be a negative number", i32(kc.RegistryPullQPS))
	}
	if kc.MaxParallelImagePulls != nil && *kc.MaxParallelImagePulls < 1 {
		add("maxParallelImagePulls %v must be a positive number", *kc.MaxParallelImagePulls)
	}
	if ptr.Deref(kc.SerializeImagePulls, true) && kc.MaxParallelImagePulls != nil && *kc.MaxParallelImagePulls > 1 {
		add("maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false")
	}
	if kc.ServerTLSBootstrap && !on("RotateKubeletServerCertificate") {
		add("serverTLSBootstrap %v requires feature gate RotateKubeletServerCertificate", kc.ServerTLSBootstrap)
	}
	if kc.RunOnce {
		add("runOnce (--runOnce) %v, Runonce mode has been deprecated and should not be set", kc.RunOnce)
	}
	for _, t := range kc.RegisterWithTaints {
		if err := checkTaint(t); err != nil {
			errs = append(errs, fmt.Errorf("invalid taint: %v", t))
		}
		if t.TimeAdded != nil {
			add("taint.TimeAdded is not nil")
		}
	}
	policies := []string{kubeletconfigv1beta1.NoneTopologyManagerPolicy, kubeletconfigv1beta1.BestEffortTopologyManagerPolicy,
		kubeletconfigv1beta1.RestrictedTopologyManagerPolicy, kubeletconfigv1beta1.SingleNumaNodeTopologyManagerPolicy}
	if !slices.Contains(policies, kc.TopologyManagerPolicy) {
		add("topologyManagerPolicy (--topology-manager-policy) %q must be one of: %q", kc.TopologyManagerPolicy, policies)
	}
	if s := kc.TopologyManagerScope; s != kubeletconfigv1beta1.ContainerTopologyManagerScope && s != kubeletconfigv1beta1.PodTopologyManagerScope {
		add("topologyManagerScope (--topology-manager-scope) %q must be one of: %q, or %q", s,
			kubeletconfigv1beta1.ContainerTopologyManagerScope, kubeletconfigv1beta1.PodTopologyManagerScope)
	}
	errs = append(errs, validateShutdown(kc, on)...)
	if on("NodeSwap") {
		if b := kc.MemorySwap.SwapBehavior; b != "" && b != "NoSwap" && b != "LimitedSwap" {
			add("memorySwap.swapBehavior %q must be one of: \"\", %q or %q", b, "LimitedSwap", "NoSwap")
		}
	} else if kc.MemorySwap != (kubeletconfigv1beta1.MemorySwapConfiguration{}) {
		add("memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled")
	}
	restart := kc.CrashLoopBackOff.MaxContainerRestartPeriod
	if on("KubeletCrashLoopBackOffMax") {
		if restart == nil {
			add("FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set")
		} else if ms := restart.Duration.Milliseconds(); ms < 1000 || ms > 300000 {
			add("CrashLoopBackOff.MaxContainerRestartPeriod (got: %v seconds) must be set between 1s and 300s", restart.Seconds())
		}
	} else if restart != nil {
		add("FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set")
	}
	errs = append(errs, validateEnforceNodeAllocatable(kc)...)
	if m := kc.HairpinMode; m != kubeletconfigv1beta1.HairpinNone && m != kubeletconfigv1beta1.HairpinVeth && m != kubeletconfigv1beta1.PromiscuousBridge {
		add("option %q specified for hairpinMode (--hairpin-mode). Valid options are %q, %q or %q",
			m, kubeletconfigv1beta1.HairpinNone, kubeletconfigv1beta1.HairpinVeth, kubeletconfigv1beta1.PromiscuousBridge)
	}
	errs = append(errs, validateImagePullCredentials(kc, on("KubeletEnsureSecretPulledImages"))...)
	if kc.ReservedSystemCPUs != "" {
		if kc.SystemReservedCgroup != "" || kc.KubeReservedCgroup != "" {
			add("can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)")
		}
		if _, err := cpuset.Parse(kc.ReservedSystemCPUs); err != nil {
			add("unable to parse reservedSystemCPUs (--reserved-cpus) %v, error: %w", kc.ReservedSystemCPUs, err)
		}
	}
	errs = append(errs, validateReservedMemory(kc.ReservedMemory)...)
	errs = append(errs, validateLinux(kc, cgroupV1)...)
	errs = append(errs, metrics.ValidateShowHiddenMetricsVersion(kc.ShowHiddenMetricsForVersion)...)
	if fe := logsapi.Validate(&kc.Logging, gates, field.NewPath("logging")); len(fe) > 0 {
		errs = append(errs, fe.ToAggregate().Errors()...)
	}
	if fe := tracingapi.ValidateTracingConfiguration(kc.Tracing, gates, field.NewPath("tracing")); len(fe) > 0 {
		errs = append(errs, fe.ToAggregate().Errors()...)
	}
	if f := kc.MemoryThrottlingFactor; f != nil {
		if !on("MemoryQoS") && *f != 0.9 {
			add("memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled")
		}
		if *f <= 0 || *f > 1.0 {
			add("memoryThrottlingFactor %v must be greater than 0 and less than or equal to 1.0", *f)
		}
	}
	if !on("MemoryQoS") && kc.MemoryReservationPolicy == kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy {
		add("memoryReservationPolicy %q requires MemoryQoS feature gate to be enabled", kc.MemoryReservationPolicy)
	}
	if r := kc.MemoryReservationPolicy; r != kubeletconfigv1beta1.NoneMemoryReservationPolicy && r != kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy {
		add("option %q specified for memoryReservationPolicy. Valid options are %q or %q", r,
			kubeletconfigv1beta1.NoneMemoryReservationPolicy, kubeletconfigv1beta1.TieredReservationMemoryReservationPolicy)
	}
	if kc.ContainerRuntimeEndpoint == "" {
		add("the containerRuntimeEndpoint was not specified or empty")
	}
	query, handler := ptr.Deref(kc.EnableSystemLogQuery, false), ptr.Deref(kc.EnableSystemLogHandler, true)
	if query && !on("NodeLogQuery") {
		add("NodeLogQuery feature gate is required for enableSystemLogQuery")
	}
	if query && !handler {
		add("enableSystemLogHandler is required for enableSystemLogQuery")
	}
	if i32(kc.ContainerLogMaxWorkers) < 1 {
		add("containerLogMaxWorkers must be greater than or equal to 1")
	}
	if ptr.Deref(kc.ContainerLogMonitorInterval, metav1.Duration{}).Duration.Seconds() < 3 {
		add("containerLogMonitorInterval must be a positive time duration greater than or equal to 3s")
	}
	if i32(kc.ContainerLogMaxFiles) <= 1 {
		add("containerLogMaxFiles must be greater than 1")
	}
	errs = append(errs, validatePodLogsDir(kc.PodLogsDir)...)
	errs = append(errs, validateValuesActorletUses(kc)...)
	return utilerrors.NewAggregate(errs)
}

// validateShutdown: the graceful node shutdown fields.
func validateShutdown(kc *kubeletconfigv1beta1.KubeletConfiguration, on func(string) bool) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	grace, critical := kc.ShutdownGracePeriod.Duration, kc.ShutdownGracePeriodCriticalPods.Duration
	if on("GracefulNodeShutdown") {
		if critical > grace {
			add("shutdownGracePeriodCriticalPods %v must be <= shutdownGracePeriod %v", kc.ShutdownGracePeriodCriticalPods, kc.ShutdownGracePeriod)
		}
		if grace < 0 || (grace > 0 && grace < time.Second) {
			add("shutdownGracePeriod %v must be either zero or otherwise >= 1 sec", kc.ShutdownGracePeriod)
		}
		if critical < 0 || (critical > 0 && critical < time.Second) {
			add("shutdownGracePeriodCriticalPods %v must be either zero or otherwise >= 1 sec", kc.ShutdownGracePeriodCriticalPods)
		}
	} else if grace > 0 || critical > 0 {
		add("specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown")
	}
	byPriority := len(kc.ShutdownGracePeriodByPodPriority) != 0
	if on("GracefulNodeShutdownBasedOnPodPriority") {
		if byPriority && (grace > 0 || critical > 0) {
			add("Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time")
		}
	} else if byPriority {
		add("Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority")
	}
	return errs
}

// The kubelet's enforceNodeAllocatable keys.
const (
	enforcePods                  = "pods"
	enforceSystemReserved        = "system-reserved"
	enforceSystemReservedCompres = "system-reserved-compressible"
	enforceKubeReserved          = "kube-reserved"
	enforceKubeReservedCompres   = "kube-reserved-compressible"
	enforceNone                  = "none"
)

func validateEnforceNodeAllocatable(kc *kubeletconfigv1beta1.KubeletConfiguration) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	has := func(k string) bool { return slices.Contains(kc.EnforceNodeAllocatable, k) }
	if has(enforceSystemReservedCompres) && has(enforceSystemReserved) {
		add("both %q and %q cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)", enforceSystemReserved, enforceSystemReservedCompres)
	}
	if has(enforceKubeReservedCompres) && has(enforceKubeReserved) {
		add("both %q and %q cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)", enforceKubeReserved, enforceKubeReservedCompres)
	}
	seen := map[string]bool{}
	for _, val := range kc.EnforceNodeAllocatable {
		if seen[val] {
			add("duplicated enforcements %q in enforceNodeAllocatable (--enforce-node-allocatable)", val)
			continue
		}
		seen[val] = true
		switch val {
		case enforcePods:
		case enforceSystemReserved, enforceSystemReservedCompres:
			if kc.SystemReservedCgroup == "" {
				add("systemReservedCgroup (--system-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", enforceSystemReserved, enforceSystemReservedCompres)
			}
		case enforceKubeReserved, enforceKubeReservedCompres:
			if kc.KubeReservedCgroup == "" {
				add("kubeReservedCgroup (--kube-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", enforceKubeReserved, enforceKubeReservedCompres)
			}
		case enforceNone:
			if len(kc.EnforceNodeAllocatable) > 1 {
				add("enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when %q is specified", enforceNone)
			}
			continue
		default:
			add("option %q specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are %q, %q, %q, %q, %q or %q",
				val, enforcePods, enforceSystemReserved, enforceSystemReservedCompres, enforceKubeReserved, enforceKubeReservedCompres, enforceNone)
			continue
		}
		if !ptr.Deref(kc.CgroupsPerQOS, true) {
			add("cgroupsPerQOS (--cgroups-per-qos) must be set to true when %q contained in enforceNodeAllocatable (--enforce-node-allocatable)", val)
		}
	}
	return errs
}

// The kubelet's image pull credential verification policies.
var credentialPolicies = []kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy{
	kubeletconfigv1beta1.NeverVerify, kubeletconfigv1beta1.NeverVerifyPreloadedImages,
	kubeletconfigv1beta1.NeverVerifyAllowlistedImages, kubeletconfigv1beta1.AlwaysVerify,
}

func validateImagePullCredentials(kc *kubeletconfigv1beta1.KubeletConfiguration, gate bool) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid configuration: "+format, args...))
	}
	policy := kc.ImagePullCredentialsVerificationPolicy
	if !gate {
		if policy != "" {
			add("`imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")
		}
		if len(kc.PreloadedImagesVerificationAllowlist) > 0 {
			add("`preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")
		}
		return errs
	}
	if !slices.Contains(credentialPolicies, policy) {
		add("option %q specified for imagePullCredentialsVerificationPolicy. Valid options are %q, %q, %q or %q", policy,
			credentialPolicies[0], credentialPolicies[1], credentialPolicies[2], credentialPolicies[3])
	}
	if len(kc.PreloadedImagesVerificationAllowlist) > 0 && policy != kubeletconfigv1beta1.NeverVerifyAllowlistedImages {
		add("can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\"")
	}
	return errs
}

// sysctlName is the kubelet's (and the API's) sysctl name syntax.
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

func validateDefaultPodSysctls(sysctls map[string]string, gate bool) []error {
	if len(sysctls) == 0 {
		return nil
	}
	if !gate {
		return []error{errors.New("invalid configuration: DefaultPodSysctls feature gate is required for Kubelet configuration option defaultPodSysctls")}
	}
	var errs []error
	seen := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(sysctls)) {
		if len(k) > 253 || !sysctlName.MatchString(k) {
			errs = append(errs, fmt.Errorf("invalid configuration: %q is not a valid sysctl name for defaultPodSysctls", k))
			continue
		}
		if ns, _, _ := utilsysctl.GetNamespace(k); ns == utilsysctl.UnknownNamespace {
			errs = append(errs, fmt.Errorf("invalid configuration: %q is not known to be namespaced for defaultPodSysctls", k))
		}
		n := utilsysctl.NormalizeName(k)
		if seen[n] {
			errs = append(errs, fmt.Errorf("invalid configuration: duplicate sysctl %q found in defaultPodSysctls", n))
		}
		seen[n] = true
	}
	return errs
}

func validateReservedMemory(rs []kubeletconfigv1beta1.MemoryReservation) []error {
	var errs []error
	seen := map[int32]map[corev1.ResourceName]bool{}
	for _, r := range rs {
		if seen[r.NumaNode] == nil {
			seen[r.NumaNode] = map[corev1.ResourceName]bool{}
		}
		for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
			q := r.Limits[name]
			if name != corev1.ResourceMemory && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
				errs = append(errs, fmt.Errorf("invalid configuration: the limit type %q for NUMA node %d is not supported, only %v is accepted",
					name, r.NumaNode, []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceHugePagesPrefix + "<HugePageSize>"}))
			}
			if q.IsZero() {
				errs = append(errs, fmt.Errorf("invalid configuration: reserved memory may not be zero for NUMA node %d and resource %q", r.NumaNode, name))
			}
			if seen[r.NumaNode][name] {
				errs = append(errs, fmt.Errorf("invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %q", r.NumaNode, name))
			}
			seen[r.NumaNode][name] = true
		}
	}
	return errs
}

// userNsUnitLength is the unit of userNamespaces.idsPerPod.
const userNsUnitLength = 65536

// validateLinux: the kubelet's Linux-only rules; the first one found.
func validateLinux(kc *kubeletconfigv1beta1.KubeletConfiguration, cgroupV1 bool) []error {
	if ptr.Deref(kc.FailCgroupV1, true) && cgroupV1 {
		return []error{errors.New("kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release")}
	}
	if cgroupV1 && kc.SingleProcessOOMKill != nil && !*kc.SingleProcessOOMKill {
		return []error{errors.New("invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1")}
	}
	if kc.UserNamespaces != nil && kc.UserNamespaces.IDsPerPod != nil {
		ids := *kc.UserNamespaces.IDsPerPod
		switch {
		case ids < userNsUnitLength:
			return []error{fmt.Errorf("invalid configuration: userNamespaces.idsPerPod must not be less than %d", userNsUnitLength)}
		case ids%userNsUnitLength != 0:
			return []error{fmt.Errorf("invalid configuration: userNamespaces.idsPerPod must be a multiple of %d", userNsUnitLength)}
		case ids > math.MaxUint32:
			return []error{fmt.Errorf("invalid configuration: userNamespaces.idsPerPod must not be more than %d", int64(math.MaxUint32))}
		}
	}
	return nil
}

func validatePodLogsDir(dir string) []error {
	var errs []error
	if dir == "" {
		errs = append(errs, errors.New("invalid configuration: podLogsDir was not specified"))
	}
	if !filepath.IsAbs(dir) {
		errs = append(errs, fmt.Errorf("invalid configuration: pod logs path %q must be absolute path", dir))
	}
	if filepath.Clean(dir) != dir {
		errs = append(errs, fmt.Errorf("invalid configuration: pod logs path %q must be normalized", dir))
	}
	for _, c := range dir {
		if c > unicode.MaxASCII {
			errs = append(errs, fmt.Errorf("invalid configuration: pod logs path %q mut contains ASCII characters only", dir))
			break
		}
	}
	return errs
}

// validateValuesActorletUses checks what the kubelet only finds out when it
// uses a value (a listen address, a DNS server, a period); actorlet refuses
// them at start, naming the field.
func validateValuesActorletUses(kc *kubeletconfigv1beta1.KubeletConfiguration) []error {
	var errs []error
	ip := func(name, v string) {
		if net.ParseIP(v) == nil {
			errs = append(errs, fmt.Errorf("invalid configuration: %s %q must be an IP address", name, v))
		}
	}
	ip("address (--address)", kc.Address)
	ip("healthzBindAddress (--healthz-bind-address)", kc.HealthzBindAddress)
	for i, v := range kc.ClusterDNS {
		ip(fmt.Sprintf("clusterDNS[%d] (--cluster-dns)", i), v)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"runtimeRequestTimeout (--runtime-request-timeout)", kc.RuntimeRequestTimeout.Duration},
		{"fileCheckFrequency (--file-check-frequency)", kc.FileCheckFrequency.Duration},
		{"syncFrequency (--sync-frequency)", kc.SyncFrequency.Duration},
		{"nodeStatusUpdateFrequency (--node-status-update-frequency)", kc.NodeStatusUpdateFrequency.Duration},
		{"nodeStatusReportFrequency", kc.NodeStatusReportFrequency.Duration},
		{"authentication.webhook.cacheTTL (--authentication-token-webhook-cache-ttl)", kc.Authentication.Webhook.CacheTTL.Duration},
		{"authorization.webhook.cacheAuthorizedTTL (--authorization-webhook-cache-authorized-ttl)", kc.Authorization.Webhook.CacheAuthorizedTTL.Duration},
		{"authorization.webhook.cacheUnauthorizedTTL (--authorization-webhook-cache-unauthorized-ttl)", kc.Authorization.Webhook.CacheUnauthorizedTTL.Duration},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("invalid configuration: %s %v must not be negative", d.name, d.v))
		}
	}
	if m := kc.Authorization.Mode; m != kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow && m != kubeletconfigv1beta1.KubeletAuthorizationModeWebhook {
		errs = append(errs, fmt.Errorf("invalid configuration: authorization.mode (--authorization-mode) %q must be %q or %q", m,
			kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow, kubeletconfigv1beta1.KubeletAuthorizationModeWebhook))
	}
	return errs
}

// ValidateNodeFlags checks the node flags as the kubelet does
// (ValidateKubeletFlags): --node-labels in the kubernetes.io and k8s.io
// namespaces must be ones the kubelet may set, and every label valid.
func ValidateNodeFlags(f *NodeFlags) error {
	var unknown, invalid []string
	for _, k := range slices.Sorted(maps.Keys(f.NodeLabels)) {
		v := f.NodeLabels[k]
		if isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			unknown = append(unknown, k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", k, strings.Join(errs, ", ")))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", v, strings.Join(errs, ", ")))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			unknown, strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", "))
	}
	if len(invalid) > 0 {
		return fmt.Errorf("invalid node labels: %s", strings.Join(invalid, "; "))
	}
	return nil
}

func isKubernetesLabel(key string) bool {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}
