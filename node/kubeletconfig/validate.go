package kubeletconfig

import (
	"net"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// validate checks the supported fields of a defaulted configuration.
func validate(c *kubeletconfigv1beta1.KubeletConfiguration) field.ErrorList {
	var errs field.ErrorList
	port := func(name string, v int32, allowZero bool) {
		if v == 0 && allowZero {
			return
		}
		for _, msg := range validation.IsValidPortNum(int(v)) {
			errs = append(errs, field.Invalid(field.NewPath(name), v, msg))
		}
	}
	positive := func(name string, d metav1.Duration) {
		if d.Duration <= 0 {
			errs = append(errs, field.Invalid(field.NewPath(name), d.Duration.String(), "must be greater than 0"))
		}
	}
	nonNegative := func(name string, v int32) {
		if v < 0 {
			errs = append(errs, field.Invalid(field.NewPath(name), v, "must be greater than or equal to 0"))
		}
	}
	ip := func(name, v string) {
		if net.ParseIP(v) == nil {
			errs = append(errs, field.Invalid(field.NewPath(name), v, "must be an IP address"))
		}
	}

	port("port", c.Port, false)
	port("healthzPort", *c.HealthzPort, true) // 0 disables the endpoint
	ip("address", c.Address)
	ip("healthzBindAddress", c.HealthzBindAddress)
	positive("runtimeRequestTimeout", c.RuntimeRequestTimeout)
	positive("fileCheckFrequency", c.FileCheckFrequency)
	positive("syncFrequency", c.SyncFrequency)
	positive("nodeStatusUpdateFrequency", c.NodeStatusUpdateFrequency)
	positive("nodeStatusReportFrequency", c.NodeStatusReportFrequency)
	for i, v := range c.ClusterDNS {
		if net.ParseIP(v) == nil {
			errs = append(errs, field.Invalid(field.NewPath("clusterDNS").Index(i), v, "must be an IP address"))
		}
	}
	nonNegative("maxPods", c.MaxPods)
	nonNegative("kubeAPIQPS", *c.KubeAPIQPS)
	nonNegative("kubeAPIBurst", c.KubeAPIBurst)
	if d := c.CrashLoopBackOff.MaxContainerRestartPeriod.Duration; d < time.Second || d > DefaultMaxContainerRestartPeriod {
		errs = append(errs, field.Invalid(field.NewPath("crashLoopBackOff", "maxContainerRestartPeriod"), d.String(),
			"must be between 1s and 300s"))
	}
	if p := c.PodLogsDir; filepath.Clean(p) != p {
		errs = append(errs, field.Invalid(field.NewPath("podLogsDir"), p, "must be a normalized path"))
	}
	effects := []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	for i, t := range c.RegisterWithTaints {
		tp := field.NewPath("registerWithTaints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(tp.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
			}
		}
		if !slices.Contains(effects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}
