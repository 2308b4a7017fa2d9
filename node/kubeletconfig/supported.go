package kubeletconfig

import (
	"slices"
	"strings"
)

// SupportedFields are the JSON paths of the KubeletConfiguration fields that
// actorlet honours; a nested field is written "parent.child". Only fields
// that `actorlet run` really uses belong here: every other field set in a
// file is reported as ignored. It grows with actorlet.
var SupportedFields = []string{
	"staticPodPath",
	"containerRuntimeEndpoint",
	"imageServiceEndpoint",
	"runtimeRequestTimeout",
	"healthzBindAddress",
	"healthzPort",
	"podLogsDir",
	"fileCheckFrequency",
	"crashLoopBackOff.maxContainerRestartPeriod",
	"registerNode",
	"registerWithTaints",
	"maxPods",
	"nodeStatusUpdateFrequency",
	"nodeStatusReportFrequency",
	"nodeLeaseDurationSeconds",
	"kubeAPIQPS",
	"kubeAPIBurst",
	"clusterDNS",
	"clusterDomain",
	"resolvConf",
	"imageGCHighThresholdPercent",
	"imageGCLowThresholdPercent",
	"imageMinimumGCAge",
	"imageMaximumGCAge",
	"syncFrequency",
	"cgroupsPerQOS",
	"cgroupRoot",
	"evictionHard",
	"evictionSoft",
	"evictionSoftGracePeriod",
	"evictionMinimumReclaim",
	"evictionPressureTransitionPeriod",
	"evictionMaxPodGracePeriod",
	"mergeDefaultEvictionSettings",
	"containerLogMaxSize",
	"containerLogMaxFiles",
	"containerLogMonitorInterval",
	"port",
	"address",
	"tlsCertFile",
	"tlsPrivateKeyFile",
	"authentication.x509.clientCAFile",
	"authentication.anonymous.enabled",
}

// Supported returns the JSON field paths actorlet honours, sorted.
func Supported() []string {
	s := slices.Clone(SupportedFields)
	slices.Sort(s)
	return s
}

// ignoredFields returns the sorted JSON paths of the fields set in raw (a
// decoded config object) that are not supported. A field whose children are
// partly supported is descended into; apiVersion and kind are never ignored.
func ignoredFields(raw map[string]any, supported []string) []string {
	var ignored []string
	var walk func(obj map[string]any, prefix string)
	walk = func(obj map[string]any, prefix string) {
		for k, v := range obj {
			path := prefix + k
			if prefix == "" && (k == "apiVersion" || k == "kind") {
				continue
			}
			if slices.Contains(supported, path) {
				continue
			}
			child, isObj := v.(map[string]any)
			hasSupportedChild := slices.ContainsFunc(supported, func(s string) bool {
				return strings.HasPrefix(s, path+".")
			})
			if isObj && hasSupportedChild {
				walk(child, path+".")
				continue
			}
			ignored = append(ignored, path)
		}
	}
	walk(raw, "")
	slices.Sort(ignored)
	return ignored
}
