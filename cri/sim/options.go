package sim

import (
	"fmt"
	"maps"
	"net/netip"
	"time"

	"go.uber.org/zap"
	"k8s.io/utils/clock"

	"github.com/actorlet/actorlet/cri/faults"
)

// Defaults used by New for zero Options fields.
const (
	DefaultPodCIDR        = "10.88.0.0/16"
	DefaultHostIP         = "127.0.0.1"
	DefaultRuntimeName    = "actorlet-sim"
	DefaultRuntimeVersion = "0.1.0"
)

// Options configure a simulated runtime. The zero value is usable.
type Options struct {
	// PodCIDR is the pool pod IPs are allocated from (IPv4 or IPv6). The
	// network address and the gateway (network+1), and for IPv4 the
	// broadcast address, are never handed out. Default DefaultPodCIDR.
	PodCIDR string
	// HostIP is reported as the IP of sandboxes in the node network
	// namespace (hostNetwork pods). Default DefaultHostIP.
	HostIP string
	// Latency is a simulated delay per RPC method name (e.g.
	// "RunPodSandbox", "PullImage"), waited on Clock before the call takes
	// effect. A call whose context ends during the delay has no effect and
	// returns the context's error.
	Latency map[string]time.Duration
	// Clock drives latencies, container exits and timestamps. Default: the
	// real clock. If it also implements clock.WithDelayedExecution (the real
	// clock and k8s.io/utils/clock/testing.FakeClock do), exits are timers
	// without goroutines; otherwise each pending exit holds one goroutine.
	Clock clock.WithTicker
	// RuntimeName and RuntimeVersion are returned by Version.
	// Defaults DefaultRuntimeName and DefaultRuntimeVersion.
	RuntimeName    string
	RuntimeVersion string
	// RuntimeHandlers are accepted in addition to the default handler ""
	// (RunPodSandboxRequest.runtime_handler); others are rejected.
	RuntimeHandlers []string
	// Logger receives one line per state change at debug level and CRI
	// misuse at warn level. Default: no logging.
	Logger *zap.Logger
	// Faults, if set, is injected into every call served by Serve and
	// InProcess (direct method calls get no faults), decided from
	// FaultSeed: see package cri/faults. Restarts act on this runtime's
	// state (Runtime.Restart); Runtime.Faults counts what was injected.
	Faults    *faults.Plan
	FaultSeed uint64
	// NewID, if set, makes the IDs of new sandboxes and containers (it is
	// called with the runtime's lock held and must not call the runtime).
	// Default: random 64-hex-digit IDs. A deterministic simulation sets it
	// so that a run's IDs, and so its journals, repeat with its seed.
	NewID func() string
	// SyncTimers runs scheduled exits in the Clock's timer callback itself
	// instead of a new goroutine. Only for a Clock that runs callbacks
	// without holding a lock the runtime's calls take (a deterministic
	// simulation's clock, driven from the goroutine that makes the calls);
	// FakeClock and the real clock need the default.
	SyncTimers bool
}

// withDefaults validates o and returns a copy with defaults filled in.
func (o Options) withDefaults() (Options, netip.Prefix, netip.Addr, error) {
	if o.PodCIDR == "" {
		o.PodCIDR = DefaultPodCIDR
	}
	prefix, err := netip.ParsePrefix(o.PodCIDR)
	if err != nil {
		return o, prefix, netip.Addr{}, fmt.Errorf("sim: pod CIDR %q: %w", o.PodCIDR, err)
	}
	if o.HostIP == "" {
		o.HostIP = DefaultHostIP
	}
	host, err := netip.ParseAddr(o.HostIP)
	if err != nil {
		return o, prefix, host, fmt.Errorf("sim: host IP %q: %w", o.HostIP, err)
	}
	for m, d := range o.Latency {
		if d < 0 {
			return o, prefix, host, fmt.Errorf("sim: latency of %s is negative (%v)", m, d)
		}
	}
	o.Latency = maps.Clone(o.Latency)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.RuntimeName == "" {
		o.RuntimeName = DefaultRuntimeName
	}
	if o.RuntimeVersion == "" {
		o.RuntimeVersion = DefaultRuntimeVersion
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return o, prefix, host, nil
}
