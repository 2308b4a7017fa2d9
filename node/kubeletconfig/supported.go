package kubeletconfig

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// ImplementedFlags are the kubelet flags actorlet acts on as the kubelet
// does. Every other kubelet flag is accepted, checked as the kubelet checks
// it, and has no effect: Ignored lists the ones given.
var ImplementedFlags = []string{
	// the process
	"help", "version", "v", "logging-format",
	// node flags
	"config", "config-dir", "kubeconfig", "bootstrap-kubeconfig", "cert-dir", "root-dir", "hostname-override",
	"node-ip", "node-labels", "maximum-dead-containers-per-container",
	// configuration flags
	"enable-server", "pod-manifest-path", "sync-frequency", "file-check-frequency", "address", "port",
	"fail-cgroupv1", "container-runtime-endpoint", "image-service-endpoint",
	"anonymous-auth", "authentication-token-webhook", "authentication-token-webhook-cache-ttl", "client-ca-file",
	"authorization-mode", "authorization-webhook-cache-authorized-ttl", "authorization-webhook-cache-unauthorized-ttl",
	"tls-cert-file", "tls-private-key-file", "rotate-server-certificates", "tls-cipher-suites", "tls-min-version",
	"rotate-certificates", "event-qps", "event-burst", "enable-debugging-handlers", "healthz-port",
	"healthz-bind-address", "read-only-port", "cluster-domain", "cluster-dns", "node-status-update-frequency",
	"minimum-image-ttl-duration", "image-gc-high-threshold", "image-gc-low-threshold", "feature-gates",
	"cgroups-per-qos", "cgroup-driver", "cgroup-root", "runtime-request-timeout", "max-pods", "resolv-conf",
	"runonce", "container-log-max-size", "container-log-max-files", "kube-api-content-type", "kube-api-qps",
	"kube-api-burst", "eviction-hard", "eviction-soft", "eviction-soft-grace-period",
	"eviction-pressure-transition-period", "eviction-max-pod-grace-period", "eviction-minimum-reclaim",
	"register-node", "register-with-taints", "allowed-unsafe-sysctls",
}

// SupportedFields are the JSON paths of the KubeletConfiguration fields that
// actorlet honours; a nested field is written "parent.child", and a field
// covers what is below it. Every other field that differs from its default
// is reported by Ignored.
var SupportedFields = []string{
	"apiVersion", "kind",
	"enableServer", "staticPodPath", "podLogsDir", "syncFrequency", "fileCheckFrequency", "address", "port",
	"tlsCertFile", "tlsPrivateKeyFile", "tlsCipherSuites", "tlsMinVersion", "rotateCertificates", "serverTLSBootstrap",
	"authentication.x509.clientCAFile", "authentication.webhook.enabled", "authentication.webhook.cacheTTL",
	"authentication.anonymous.enabled", "authorization.mode", "authorization.webhook.cacheAuthorizedTTL",
	"authorization.webhook.cacheUnauthorizedTTL",
	"eventRecordQPS", "eventBurst", "enableDebuggingHandlers", "healthzPort", "healthzBindAddress", "readOnlyPort",
	"clusterDomain", "clusterDNS", "nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "nodeLeaseDurationSeconds",
	"imageMinimumGCAge", "imageMaximumGCAge", "imageGCHighThresholdPercent", "imageGCLowThresholdPercent",
	"cgroupRoot", "cgroupsPerQOS", "cgroupDriver", "runtimeRequestTimeout", "maxPods", "resolvConf", "runOnce",
	"contentType", "kubeAPIQPS", "kubeAPIBurst",
	"evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionPressureTransitionPeriod",
	"evictionMaxPodGracePeriod", "evictionMinimumReclaim", "mergeDefaultEvictionSettings",
	"failCgroupV1", "containerLogMaxSize", "containerLogMaxFiles", "containerLogMonitorInterval",
	"logging.format", "logging.verbosity",
	"crashLoopBackOff.maxContainerRestartPeriod",
	"registerWithTaints", "registerNode", "containerRuntimeEndpoint", "imageServiceEndpoint",
	"tracing", "allowedUnsafeSysctls",
}

// Supported returns the JSON field paths actorlet honours, sorted.
func Supported() []string {
	s := slices.Clone(SupportedFields)
	slices.Sort(s)
	return s
}

// Ignored lists what the operator set that actorlet accepts and does not act
// on, for one warning at start: the kubelet flags given on fs that are not
// ImplementedFlags (sorted, "--name"), and the fields of kc that differ from
// the profile's defaults and are not SupportedFields (sorted JSON paths;
// fields set to their default change nothing and are not listed). own names
// the caller's own flags, which are never listed.
func Ignored(fs *pflag.FlagSet, kc *kubeletconfigv1beta1.KubeletConfiguration, p Profile, own func(name string) bool) (flags, fields []string) {
	fs.Visit(func(f *pflag.Flag) {
		if !slices.Contains(ImplementedFlags, f.Name) && (own == nil || !own(f.Name)) {
			flags = append(flags, "--"+f.Name)
		}
	})
	slices.Sort(flags)
	return flags, changedFields(kc, Defaults(p), SupportedFields)
}

// changedFields returns the sorted JSON paths where got differs from def and
// no supported path covers.
func changedFields(got, def any, supported []string) []string {
	var a, b map[string]any
	if ja, err := json.Marshal(got); err == nil {
		_ = json.Unmarshal(ja, &a)
	}
	if jb, err := json.Marshal(def); err == nil {
		_ = json.Unmarshal(jb, &b)
	}
	covered := func(path string) bool {
		for _, s := range supported {
			if path == s || strings.HasPrefix(path, s+".") {
				return true
			}
		}
		return false
	}
	var out []string
	var walk func(x, y map[string]any, prefix string)
	walk = func(x, y map[string]any, prefix string) {
		for k, v := range x {
			path := prefix + k
			if covered(path) {
				continue
			}
			w, ok := y[k]
			xo, xIsObj := v.(map[string]any)
			yo, yIsObj := w.(map[string]any)
			switch {
			case xIsObj && (yIsObj || !ok):
				walk(xo, yo, path+".")
			case !ok || !reflect.DeepEqual(v, w):
				out = append(out, path)
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok && !covered(prefix+k) {
				out = append(out, prefix+k)
			}
		}
	}
	walk(a, b, "")
	slices.Sort(out)
	return slices.Compact(out)
}
