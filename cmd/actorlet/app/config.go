package app

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/eviction"
	"github.com/actorlet/actorlet/node/imagegc"
	"github.com/actorlet/actorlet/node/kubeletconfig"
	"github.com/actorlet/actorlet/node/logrotate"
)

// ownFlags are actorlet's flags beside the kubelet's. Those that stand for a
// KubeletConfiguration field the kubelet has no flag for (--pod-logs-dir,
// --crashloop-backoff-max, --container-log-monitor-interval,
// --node-status-report-frequency, --node-lease-duration-seconds) win over
// the config file as flags do.
type ownFlags struct {
	log                 logOptions
	podLogsDir          string
	backoffInitial      time.Duration
	backoffMax          time.Duration
	relistPeriod        time.Duration
	eventedRelistPeriod time.Duration
	simPodCIDR          string
	simLatency          string
	logMonitorInterval  time.Duration
	statusReport        time.Duration
	leaseSeconds        int32
	shutdownGracePeriod time.Duration
}

// isOwnFlag tells whether name is one of actorlet's own flags.
func isOwnFlag(name string) bool {
	return ownFlagNames()[name]
}

// ownFlagNames are the names of actorlet's own flags, made once.
var ownFlagNames = sync.OnceValue(func() map[string]bool {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	(&ownFlags{}).addFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
})

func (o *ownFlags) addFlags(fs *pflag.FlagSet) {
	def := kubeletconfig.Defaults(kubeletconfig.KubeletProfile)
	o.log.addFlags(fs)
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", def.PodLogsDir, "where container logs go (<dir>/<ns>_<name>_<uid>/<container>/<n>.log; podLogsDir)")
	fs.DurationVar(&o.backoffInitial, "crashloop-backoff-initial", 10*time.Second, "delay before the second restart of a crashing container (then doubling)")
	fs.DurationVar(&o.backoffMax, "crashloop-backoff-max", kubeletconfig.DefaultMaxContainerRestartPeriod, "the longest crash-loop back-off (crashLoopBackOff.maxContainerRestartPeriod)")
	fs.DurationVar(&o.relistPeriod, "relist-period", time.Second, "how often the runtime is listed when it does not serve container events")
	fs.DurationVar(&o.eventedRelistPeriod, "evented-relist-period", cri.DefaultEventedRelistPeriod, "how often the runtime is listed in full while it serves container events (the safety net for an event lost)")
	fs.StringVar(&o.simPodCIDR, "sim-pod-cidr", "10.88.0.0/16", "with sim://: the CIDR pod IPs come from")
	fs.StringVar(&o.simLatency, "sim-latency", "", "with sim://: per-RPC latency, e.g. RunPodSandbox=50ms,PullImage=200ms")
	fs.DurationVar(&o.logMonitorInterval, "container-log-monitor-interval", logrotate.DefaultMonitorInterval, "how often container logs are checked for rotation (containerLogMonitorInterval)")
	fs.DurationVar(&o.statusReport, "node-status-report-frequency", kubeletconfig.DefaultNodeStatusReportFrequency, "how often the node status is sent when nothing changed (nodeStatusReportFrequency)")
	fs.Int32Var(&o.leaseSeconds, "node-lease-duration-seconds", kubeletconfig.DefaultNodeLeaseDurationSeconds, "duration of the node's Lease, renewed every quarter of it (nodeLeaseDurationSeconds)")
	fs.DurationVar(&o.shutdownGracePeriod, "shutdown-grace-period", 10*time.Second, "how long in-flight work may finish on SIGTERM (pods keep running)")
}

// applyTo sets the fields ownFlags stand for, where the flag was given.
func (o *ownFlags) applyTo(kc *kubeletconfigv1beta1.KubeletConfiguration, fs *pflag.FlagSet) {
	if fs.Changed("pod-logs-dir") {
		kc.PodLogsDir = o.podLogsDir
	}
	if fs.Changed("crashloop-backoff-max") {
		kc.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: o.backoffMax}
	}
	if fs.Changed("container-log-monitor-interval") {
		kc.ContainerLogMonitorInterval = &metav1.Duration{Duration: o.logMonitorInterval}
	}
	if fs.Changed("node-status-report-frequency") {
		kc.NodeStatusReportFrequency.Duration = o.statusReport
	}
	if fs.Changed("node-lease-duration-seconds") {
		kc.NodeLeaseDurationSeconds = o.leaseSeconds
	}
}

// nodeConfig is one node's configuration: the kubelet's (flags, file,
// drop-ins; validated) and actorlet's own flags, with what is derived from
// them.
type nodeConfig struct {
	profile kubeletconfig.Profile
	kc      *kubeletconfigv1beta1.KubeletConfiguration
	node    *kubeletconfig.NodeFlags
	own     ownFlags
	// nodeName is the node's name (--hostname-override or the host name,
	// lower-cased); nodeIPs its addresses (--node-ip, or found).
	nodeName string
	nodeIPs  []net.IP
	// readOnlyAddress is where the read-only port listens, when it is on
	// (see readOnlyAddress).
	readOnlyAddress string
	// log is the resolved log level and format.
	log logOptions
	// eviction is nil when no threshold is configured.
	eviction    *eviction.Config
	imageGC     imagegc.Policy
	logRotation logrotate.Policy
	// ignoredFlags and ignoredFields are accepted and not acted on;
	// warnings come from reading the configuration. All are logged once.
	ignoredFlags, ignoredFields []string
	warnings                    []error
}

// parseCommandLine reads a command line: the kubelet's flags and actorlet's
// own, the config file and drop-ins, with the profile's defaults and the
// kubelet's precedence.
func parseCommandLine(args []string, p kubeletconfig.Profile, stderr io.Writer) (*kubeletconfig.Parsed, *ownFlags, error) {
	own := &ownFlags{}
	parsed, err := kubeletconfig.Parse(args, p, own.addFlags, stderr)
	return parsed, own, err
}

// resolve validates a parsed command line with the kubelet's rules and
// derives the node's configuration.
func resolve(parsed *kubeletconfig.Parsed, own *ownFlags, p kubeletconfig.Profile) (*nodeConfig, error) {
	kc := parsed.Config
	own.applyTo(kc, parsed.FlagSet)
	if err := kubeletconfig.ValidateNodeFlags(parsed.Node); err != nil {
		return nil, fmt.Errorf("failed to validate kubelet flags: %w", err)
	}
	if err := kubeletconfig.Validate(kc, p, cgroupV1()); err != nil {
		return nil, fmt.Errorf("failed to validate kubelet configuration: %w", err)
	}
	nc := &nodeConfig{profile: p, kc: kc, node: parsed.Node, own: *own, warnings: parsed.Warnings,
		log: resolveLogging(own.log, kc, parsed.FlagSet, p)}
	nc.ignoredFlags, nc.ignoredFields = kubeletconfig.Ignored(parsed.FlagSet, kc, p, isOwnFlag)
	nc.readOnlyAddress = readOnlyAddress(kc.Address, parsed.FlagSet.Changed("address"))
	if nc.kc.ImageServiceEndpoint == "" {
		nc.kc.ImageServiceEndpoint = nc.kc.ContainerRuntimeEndpoint
	}
	if parsed.Node.RootDirectory == "" {
		return nil, errors.New("--root-dir must not be empty")
	}
	// actorlet run keeps its certificates with its state, so that nodes on
	// one host do not share them.
	if p == kubeletconfig.RunProfile && !parsed.FlagSet.Changed("cert-dir") {
		parsed.Node.CertDirectory = filepath.Join(parsed.Node.RootDirectory, "pki")
	}
	if own.backoffInitial <= 0 || maxRestartPeriod(kc) < own.backoffInitial {
		return nil, fmt.Errorf("crash-loop back-off %s..%s is not a valid range", own.backoffInitial, maxRestartPeriod(kc))
	}
	if own.relistPeriod <= 0 || own.eventedRelistPeriod <= 0 {
		return nil, fmt.Errorf("--relist-period %s, --evented-relist-period %s: both must be positive", own.relistPeriod, own.eventedRelistPeriod)
	}
	if parsed.Node.MaxPerPodContainerCount < 0 {
		return nil, fmt.Errorf("--maximum-dead-containers-per-container %d must not be negative", parsed.Node.MaxPerPodContainerCount)
	}
	name := parsed.Node.HostnameOverride
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("node name: %w (set --hostname-override)", err)
		}
		name = h
	}
	var err error
	if nc.nodeName, err = nodeName(name, parsed.Node.HostnameOverride != ""); err != nil {
		return nil, err
	}
	ips, err := nodeIPs(parsed.Node, p)
	if err != nil {
		return nil, err
	}
	nc.nodeIPs = ips
	if err := nc.policies(); err != nil {
		return nil, err
	}
	return nc, nil
}

// policies derives eviction, image garbage collection and log rotation from
// the configuration.
func (nc *nodeConfig) policies() error {
	kc := nc.kc
	// An explicitly empty evictionHard (--eviction-hard=none) with no soft
	// thresholds turns eviction off.
	if !(kc.EvictionHard != nil && len(kc.EvictionHard) == 0 && len(kc.EvictionSoft) == 0) {
		cfg, err := eviction.ParseConfig(kc)
		if err != nil {
			return fmt.Errorf("eviction: %w", err)
		}
		nc.eviction = &cfg
	}
	size, err := logrotate.ParseMaxSize(kc.ContainerLogMaxSize)
	if err != nil {
		return fmt.Errorf("containerLogMaxSize (--container-log-max-size): %w", err)
	}
	nc.logRotation = logrotate.Policy{
		MaxSize: size, MaxFiles: int(ptr.Deref(kc.ContainerLogMaxFiles, logrotate.DefaultMaxFiles)),
		MonitorInterval: ptr.Deref(kc.ContainerLogMonitorInterval, metav1.Duration{Duration: logrotate.DefaultMonitorInterval}).Duration,
		MaxWorkers:      int(ptr.Deref(kc.ContainerLogMaxWorkers, logrotate.DefaultMaxWorkers)),
	}
	if err := nc.logRotation.Validate(); err != nil {
		return fmt.Errorf("container log rotation: %w", err)
	}
	nc.imageGC = imagegc.Policy{
		HighThresholdPercent: int(ptr.Deref(kc.ImageGCHighThresholdPercent, imagegc.DefaultHighThresholdPercent)),
		LowThresholdPercent:  int(ptr.Deref(kc.ImageGCLowThresholdPercent, imagegc.DefaultLowThresholdPercent)),
		MinAge:               kc.ImageMinimumGCAge.Duration,
		MaxAge:               kc.ImageMaximumGCAge.Duration,
	}
	if err := nc.imageGC.Validate(); err != nil {
		return fmt.Errorf("image garbage collection: %w", err)
	}
	return nil
}

// nodeName is the node's name from the host name or --hostname-override
// (override), as the kubelet derives it: trimmed and lower-cased. It must
// then be a DNS subdomain (RFC 1123), as the API server requires of a Node's
// name and as every static pod's name (<pod>-<node>) needs: a name such as
// "Bad_Host" is an error at start, naming where it came from, rather than a
// rejection of every static pod later.
func nodeName(name string, override bool) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	from := fmt.Sprintf("the host name %q", name)
	if override {
		from = fmt.Sprintf("--hostname-override %q", name)
	}
	if n == "" {
		return "", fmt.Errorf("node name from %s is empty", from)
	}
	if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
		return "", fmt.Errorf("node name %q from %s is not valid: %s", n, from, strings.Join(msgs, "; "))
	}
	return n, nil
}

// nodeIPs are the node's addresses: --node-ip (one IP or a dual-stack pair);
// unset, under the kubelet's profile as the kubelet finds them (an IP given
// as --hostname-override, else the address of the interface of the default
// route), under RunProfile 127.0.0.1.
func nodeIPs(f *kubeletconfig.NodeFlags, p kubeletconfig.Profile) ([]net.IP, error) {
	if f.NodeIP == "" {
		if p == kubeletconfig.RunProfile {
			return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
		}
		if ip := net.ParseIP(f.HostnameOverride); ip != nil {
			return []net.IP{ip}, nil
		}
		ip, err := utilnet.ChooseHostInterface()
		if err != nil {
			return nil, fmt.Errorf("node IP: %w (set --node-ip)", err)
		}
		return []net.IP{ip}, nil
	}
	var ips []net.IP
	for _, s := range strings.Split(f.NodeIP, ",") {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			return nil, fmt.Errorf("--node-ip %q: %q is not an IP address", f.NodeIP, s)
		}
		ips = append(ips, ip)
	}
	if len(ips) > 2 || (len(ips) == 2 && (ips[0].To4() == nil) == (ips[1].To4() == nil)) {
		return nil, fmt.Errorf("--node-ip %q: at most one IPv4 and one IPv6 address", f.NodeIP)
	}
	return ips, nil
}

func maxRestartPeriod(kc *kubeletconfigv1beta1.KubeletConfiguration) time.Duration {
	if kc.CrashLoopBackOff.MaxContainerRestartPeriod != nil {
		return kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration
	}
	return kubeletconfig.DefaultMaxContainerRestartPeriod
}

// cgroupV1 tells whether the host's cgroups are v1 (/sys/fs/cgroup is not
// the cgroup2 filesystem).
func cgroupV1() bool {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false
	}
	return st.Type != unix.CGROUP2_SUPER_MAGIC
}

func goVersion() string { return runtime.Version() }
func platform() string  { return runtime.GOOS + "/" + runtime.GOARCH }
