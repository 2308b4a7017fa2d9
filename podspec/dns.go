package podspec

import (
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet's limits on a pod's resolv.conf (k8s.io/kubernetes
// pkg/apis/core/validation, pkg/kubelet/network/dns).
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchLength    = 253 // a longer search domain aborts some resolvers (glibc 2.28)
)

// clusterFirstOptions are the options of a pod using the cluster DNS, as the
// kubelet sets them.
var clusterFirstOptions = []string{"ndots:5"}

// ReadFileFunc reads a whole file; os.ReadFile is one. Tests inject one that
// serves testdata strings.
type ReadFileFunc func(path string) ([]byte, error)

// PodDNS is a pod's DNS configuration for its sandbox, with the kubelet's
// warnings about it (its MissingClusterDNS and DNSConfigForming events).
type PodDNS struct {
	Config   *runtimeapi.DNSConfig
	Warnings []string
}

// PodDNSConfig computes the pod's DNS configuration as the kubelet's
// dns.Configurer.GetPodDNS does:
//
//   - None: only the pod's dnsConfig.
//   - ClusterFirst (and "", the API's default): the cluster DNS servers,
//     the searches <ns>.svc.<domain>, svc.<domain>, <domain> before the
//     host's, and ndots:5. A hostNetwork pod uses the host's resolv.conf
//     instead (use ClusterFirstWithHostNet for the cluster DNS). Without
//     o.ClusterDNS the pod falls back to Default, with a warning.
//   - ClusterFirstWithHostNet: the cluster DNS, hostNetwork or not.
//   - Default: the host's resolv.conf (o.ResolvConf); with o.ResolvConf ""
//     the kubelet's stand-in: nameserver 127.0.0.1, search ".".
//
// The pod's dnsConfig is then merged in (nameservers and searches appended
// without duplicates, options by name, the pod's winning), and the result cut
// to 3 nameservers and 32 searches of at most 2048 characters together, with
// a warning naming what was applied. Unlike the kubelet, whose option order
// follows a map's, the options keep the order they first appear in.
//
// The host's resolv.conf is read (through o.ReadFile, os.ReadFile when nil)
// at each call, so a change is seen by the next sandbox; when o.ResolvConf is
// set and cannot be read, the error names the pod and the file.
func PodDNSConfig(pod *corev1.Pod, o Options) (PodDNS, error) {
	var out PodDNS
	host, err := hostDNS(o)
	if err != nil {
		return out, fmt.Errorf("DNS of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	cfg := host
	switch dnsPolicy(pod) {
	case corev1.DNSNone:
		cfg = &runtimeapi.DNSConfig{}
	case corev1.DNSClusterFirst:
		if len(o.ClusterDNS) > 0 {
			cfg = &runtimeapi.DNSConfig{
				Servers:  slices.Clone(o.ClusterDNS),
				Searches: clusterSearches(pod, o.ClusterDomain, host.Searches),
				Options:  slices.Clone(clusterFirstOptions),
			}
			break
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"MissingClusterDNS: kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
			corev1.DNSClusterFirst, corev1.DNSDefault))
		fallthrough
	case corev1.DNSDefault:
		if o.ResolvConf == "" {
			// No host resolv.conf: resolve on the node itself rather than
			// let the runtime copy its own.
			cfg = &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}}
		}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, dc.Searches...))
		cfg.Options = mergeDNSOptions(cfg.Options, dc.Options)
	}
	var warn string
	if cfg.Searches, warn = fitSearches(cfg.Searches); warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		out.Warnings = append(out.Warnings, "DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "+
			strings.Join(cfg.Servers, " "))
	}
	out.Config = cfg
	return out, nil
}

// dnsPolicy is the pod's policy as the kubelet applies it: ClusterFirst of a
// hostNetwork pod is Default, and "" is the API's default, ClusterFirst.
func dnsPolicy(pod *corev1.Pod) corev1.DNSPolicy {
	switch p := pod.Spec.DNSPolicy; p {
	case corev1.DNSNone, corev1.DNSDefault:
		return p
	case corev1.DNSClusterFirstWithHostNet:
		return corev1.DNSClusterFirst
	default:
		if pod.Spec.HostNetwork {
			return corev1.DNSDefault
		}
		return corev1.DNSClusterFirst
	}
}

// hostDNS is the host's resolv.conf, or an empty config without one.
func hostDNS(o Options) (*runtimeapi.DNSConfig, error) {
	if o.ResolvConf == "" {
		return &runtimeapi.DNSConfig{}, nil
	}
	read := o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	b, err := read(o.ResolvConf)
	if err != nil {
		return nil, fmt.Errorf("read host resolv.conf: %w", err)
	}
	cfg, err := parseResolvConf(string(b))
	if err != nil {
		return nil, fmt.Errorf("parse host resolv.conf %s: %w", o.ResolvConf, err)
	}
	return cfg, nil
}

// parseResolvConf reads a resolv.conf as the kubelet does: nameserver lines
// accumulate, the last search line wins (its domains without a trailing
// dot, "." dropped), options lines merge by name.
func parseResolvConf(text string) (*runtimeapi.DNSConfig, error) {
	cfg := &runtimeapi.DNSConfig{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				return nil, fmt.Errorf("nameserver line without an address")
			}
			cfg.Servers = append(cfg.Servers, fields[1])
		case "search":
			cfg.Searches = nil
			for _, s := range fields[1:] {
				if s != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			cfg.Options = mergeOptionStrings(cfg.Options, fields[1:])
		}
	}
	return cfg, nil
}

// clusterSearches puts the cluster's domains before the host's searches.
func clusterSearches(pod *corev1.Pod, domain string, hostSearches []string) []string {
	if domain == "" {
		return slices.Clone(hostSearches)
	}
	return omitDuplicates(append([]string{
		pod.Namespace + ".svc." + domain, "svc." + domain, domain,
	}, hostSearches...))
}

// fitSearches drops the searches beyond 32, those longer than 253
// characters, and then the last ones until the line fits 2048 characters.
func fitSearches(searches []string) ([]string, string) {
	exceeded := false
	if len(searches) > maxDNSSearchPaths {
		searches, exceeded = searches[:maxDNSSearchPaths], true
	}
	kept := searches[:0:0]
	for _, s := range searches {
		if len(s) > maxDNSSearchLength {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	for len(kept) > 0 && len(strings.Join(kept, " ")) > maxDNSSearchListChars {
		kept, exceeded = kept[:len(kept)-1], true
	}
	if !exceeded {
		return kept, ""
	}
	return kept, "DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " +
		strings.Join(kept, " ")
}

func omitDuplicates(xs []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// mergeDNSOptions merges the pod's options into base by name, the pod's
// value winning, in the order the names first appear.
func mergeDNSOptions(base []string, pod []corev1.PodDNSConfigOption) []string {
	more := make([]string, 0, len(pod))
	for _, o := range pod {
		s := o.Name
		if o.Value != nil && *o.Value != "" {
			s += ":" + *o.Value
		}
		more = append(more, s)
	}
	return mergeOptionStrings(base, more)
}

// mergeOptionStrings merges "name" or "name:value" options by name, later
// values winning, in the order the names first appear.
func mergeOptionStrings(base, more []string) []string {
	out := slices.Clone(base)
	for _, m := range more {
		name, _, _ := strings.Cut(m, ":")
		i := slices.IndexFunc(out, func(o string) bool {
			n, _, _ := strings.Cut(o, ":")
			return n == name
		})
		if i >= 0 {
			out[i] = m
		} else {
			out = append(out, m)
		}
	}
	return out
}
