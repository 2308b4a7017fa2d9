package kubeletconfig

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// The kubelet's defaults for the supported fields.
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
	// DefaultAddress is loopback: unlike the kubelet (0.0.0.0), actorlet serves
	// on every interface only when configured to.
	DefaultAddress = "127.0.0.1"
	DefaultPort    = 10250
)

// Defaults returns a KubeletConfiguration with its TypeMeta and the kubelet's
// default for every supported field. staticPodPath, imageServiceEndpoint and
// registerWithTaints have no default (empty: no static pods, the image
// service is the runtime endpoint, no taints); neither have clusterDNS and
// clusterDomain (ClusterFirst pods then fall back to the Default policy).
func Defaults() *kubeletconfigv1beta1.KubeletConfiguration {
	c := &kubeletconfigv1beta1.KubeletConfiguration{}
	c.APIVersion = kubeletconfigv1beta1.SchemeGroupVersion.String()
	c.Kind = Kind
	applyDefaults(c)
	return c
}

// applyDefaults fills the unset supported fields of c, like the kubelet's
// defaulting: a zero value is unset, except for pointer fields, where only
// nil is (so healthzPort: 0 still disables the health endpoint and
// registerNode: false stays false).
func applyDefaults(c *kubeletconfigv1beta1.KubeletConfiguration) {
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
	str(&c.ContainerRuntimeEndpoint, DefaultContainerRuntimeEndpoint)
	dur(&c.RuntimeRequestTimeout, DefaultRuntimeRequestTimeout)
	str(&c.HealthzBindAddress, DefaultHealthzBindAddress)
	if c.HealthzPort == nil {
		c.HealthzPort = ptr.To[int32](DefaultHealthzPort)
	}
	str(&c.PodLogsDir, DefaultPodLogsDir)
	if c.MaxPods == 0 {
		c.MaxPods = DefaultMaxPods
	}
	dur(&c.FileCheckFrequency, DefaultFileCheckFrequency)
	dur(&c.SyncFrequency, DefaultSyncFrequency)
	if c.CrashLoopBackOff.MaxContainerRestartPeriod == nil {
		c.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: DefaultMaxContainerRestartPeriod}
	}
	// As in the kubelet: an explicit update frequency without a report
	// frequency makes the report frequency follow it (backward compatibility).
	if c.NodeStatusReportFrequency.Duration == 0 {
		if c.NodeStatusUpdateFrequency.Duration == 0 {
			c.NodeStatusReportFrequency.Duration = DefaultNodeStatusReportFrequency
		} else {
			c.NodeStatusReportFrequency = c.NodeStatusUpdateFrequency
		}
	}
	dur(&c.NodeStatusUpdateFrequency, DefaultNodeStatusUpdateFrequency)
	if c.KubeAPIQPS == nil {
		c.KubeAPIQPS = ptr.To[int32](DefaultKubeAPIQPS)
	}
	if c.KubeAPIBurst == 0 {
		c.KubeAPIBurst = DefaultKubeAPIBurst
	}
	if c.RegisterNode == nil {
		c.RegisterNode = ptr.To(DefaultRegisterNode)
	}
	if c.NodeLeaseDurationSeconds == 0 {
		c.NodeLeaseDurationSeconds = DefaultNodeLeaseDurationSeconds
	}
	if c.ResolverConfig == nil {
		c.ResolverConfig = ptr.To(DefaultResolvConf)
	}
	str(&c.Address, DefaultAddress)
	if c.Port == 0 {
		c.Port = DefaultPort
	}
}
