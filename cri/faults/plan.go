package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"sigs.k8s.io/yaml"
)

// Plan says which faults to inject into a CRI runtime's RPCs and event
// streams, and how often. It is data: built in Go, or read from a YAML or
// JSON file with Load (the format is in the package doc). Which call gets
// which fault is decided from the plan and a seed (see Injector); the plan
// holds no seed.
//
// The zero Plan injects nothing. A Plan is not modified by the Injector.
type Plan struct {
	// RPCs are the faults per RPC method, by the method's short name
	// ("RunPodSandbox", "PullImage"); "*" (AnyMethod) applies to every
	// method without its own entry. A method's entry replaces "*" for it
	// entirely: fields it leaves out are zero, not inherited.
	RPCs map[string]RPCFaults `json:"rpcs,omitempty"`
	// Events are the faults of the events of GetContainerEvents streams.
	Events EventFaults `json:"events,omitzero"`
	// Restart makes the runtime restart now and then.
	Restart Restart `json:"restart,omitzero"`
}

// AnyMethod is the key of Plan.RPCs that applies to every method without
// its own entry.
const AnyMethod = "*"

// RPCFaults are the faults of one RPC method. Error, ErrorAfter, Hang and
// HangAfter are probabilities per call, mutually exclusive (their sum is at
// most 1); Latency is drawn independently of them.
type RPCFaults struct {
	// Error fails the call with one of Codes before it reaches the runtime:
	// the call has no effect.
	Error float64 `json:"error,omitempty"`
	// ErrorAfter lets the call take effect, then replaces its reply with
	// one of Codes: the caller cannot tell whether it happened (a reply
	// lost to a timeout or a broken connection).
	ErrorAfter float64 `json:"errorAfter,omitempty"`
	// Codes are the gRPC codes of Error and ErrorAfter, one chosen
	// uniformly per failure. Required when either rate is non-zero.
	Codes []Code `json:"codes,omitempty"`
	// Hang holds the call, without effect, until the caller's context ends
	// (its deadline or cancellation); the caller sees DeadlineExceeded or
	// Canceled.
	Hang float64 `json:"hang,omitempty"`
	// HangAfter lets the call take effect, then withholds the reply until
	// the caller's context ends.
	HangAfter float64 `json:"hangAfter,omitempty"`
	// Latency delays calls before they reach the runtime.
	Latency Latency `json:"latency,omitzero"`
}

// EventFaults are per-event probabilities for the events a
// GetContainerEvents stream sends; mutually exclusive (sum at most 1).
type EventFaults struct {
	// Drop loses the event.
	Drop float64 `json:"drop,omitempty"`
	// Duplicate sends the event twice.
	Duplicate float64 `json:"duplicate,omitempty"`
	// Reorder holds the event back and sends it after the next one, or
	// after ReorderWindow if no other event comes first.
	Reorder float64 `json:"reorder,omitempty"`
	// ReorderWindow bounds how long a reordered event is held
	// (default DefaultReorderWindow).
	ReorderWindow Duration `json:"reorderWindow,omitempty"`
	// Break ends the stream with Unavailable instead of sending the event,
	// as a runtime's broken subscription does; the event is lost.
	Break float64 `json:"break,omitempty"`
}

// DefaultReorderWindow is EventFaults.ReorderWindow when unset.
const DefaultReorderWindow = time.Second

// Restart makes the runtime restart: each RPC call, before it is served,
// triggers a restart with probability Rate, and the calls numbered in
// AtCalls do so for sure. A restart ends every call and event stream in
// flight with Unavailable, then the runtime refuses calls with Unavailable
// for Downtime, as while a runtime process starts again.
type Restart struct {
	// Rate is the probability per RPC call.
	Rate float64 `json:"rate,omitempty"`
	// AtCalls are numbers of calls (from 0, over all methods, in the order
	// they reach the runtime) that restart it: a scenario "restart once,
	// after the node settled" without chance.
	AtCalls []uint64 `json:"atCalls,omitempty"`
	// Mode is what survives the restart (default RestartKeep).
	Mode RestartMode `json:"mode,omitempty"`
	// Downtime is how long the runtime is down after a restart.
	Downtime Duration `json:"downtime,omitempty"`
}

// RestartMode is what a runtime keeps over a restart.
type RestartMode string

// Restart modes.
const (
	// RestartKeep is a runtime process restart (containerd's, with its
	// shims alive): sandboxes and containers stay as they were, running
	// containers keep running; only calls and event streams are cut, and
	// events of the downtime are not delivered. The only mode a proxy in
	// front of a real runtime can inject.
	RestartKeep RestartMode = "keep"
	// RestartReboot is a machine reboot as containerd recovers from it:
	// every sandbox is NOTREADY (its IP released), every running container
	// EXITED with exit code 255 and reason "Unknown"; CREATED and EXITED
	// containers and images stay. Simulated runtime only.
	RestartReboot RestartMode = "reboot"
	// RestartWipe loses the runtime's state: no sandbox or container is
	// left (images stay). Simulated runtime only.
	RestartWipe RestartMode = "wipe"
)

// Valid reports whether m is a known mode ("" counts as RestartKeep).
func (m RestartMode) Valid() bool {
	switch m {
	case "", RestartKeep, RestartReboot, RestartWipe:
		return true
	}
	return false
}

// orKeep is m with "" as RestartKeep.
func (m RestartMode) orKeep() RestartMode {
	if m == "" {
		return RestartKeep
	}
	return m
}

// Latency is a distribution of delays added to a call before it reaches
// the runtime. The zero Latency adds none.
type Latency struct {
	// Rate is the probability that a call is delayed (default 1 when a
	// Distribution is set).
	Rate *float64 `json:"rate,omitempty"`
	// Distribution selects the parameters that apply:
	//   fixed:       Value
	//   uniform:     Min, Max
	//   exponential: Mean (capped at Max if set)
	//   lognormal:   Median and Sigma (capped at Max if set)
	Distribution Distribution `json:"distribution,omitempty"`
	Value        Duration     `json:"value,omitempty"`
	Min          Duration     `json:"min,omitempty"`
	Max          Duration     `json:"max,omitempty"`
	Mean         Duration     `json:"mean,omitempty"`
	Median       Duration     `json:"median,omitempty"`
	Sigma        float64      `json:"sigma,omitempty"`
}

// Distribution names a latency distribution.
type Distribution string

// Latency distributions.
const (
	Fixed       Distribution = "fixed"
	Uniform     Distribution = "uniform"
	Exponential Distribution = "exponential"
	LogNormal   Distribution = "lognormal"
)

// Duration is a time.Duration written as a Go duration string ("250ms").
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "1.5s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"250ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// Code is a gRPC status code, written by name ("Unavailable"; the
// upper-case form "UNAVAILABLE" is read too).
type Code codes.Code

// MarshalJSON writes c's name.
func (c Code) MarshalJSON() ([]byte, error) { return json.Marshal(codes.Code(c).String()) }

// UnmarshalJSON reads a code name.
func (c *Code) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a gRPC code name such as \"Unavailable\", got %s", b)
	}
	v, ok := codeByName(s)
	if !ok {
		return fmt.Errorf("unknown gRPC code %q (want e.g. Unavailable, DeadlineExceeded, Internal)", s)
	}
	*c = Code(v)
	return nil
}

func codeByName(s string) (codes.Code, bool) {
	want := strings.ReplaceAll(strings.ToLower(s), "_", "")
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.ToLower(c.String()) == want {
			return c, true
		}
	}
	return 0, false
}

// Load returns the preset named by arg ("default" or "none", see Preset),
// or else reads the plan file arg (YAML or JSON; unknown fields are
// errors) and validates it. Errors name the file and the field.
func Load(arg string) (*Plan, error) {
	if p, err := Preset(arg); err == nil {
		return p, nil
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		return nil, fmt.Errorf("fault plan %q is neither a preset (%s) nor a readable file: %w", arg, strings.Join(PresetNames(), ", "), err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("fault plan %s: %w", arg, err)
	}
	return p, nil
}

// Parse reads a plan in YAML or JSON and validates it.
func Parse(b []byte) (*Plan, error) {
	var p Plan
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate reports the first thing wrong with p, naming the field.
func (p *Plan) Validate() error {
	known := Methods()
	for m, f := range p.RPCs {
		if m != AnyMethod {
			if _, ok := slices.BinarySearch(known, m); !ok {
				return fmt.Errorf("rpcs: unknown CRI method %q (want \"*\" or one of %s)", m, strings.Join(known, ", "))
			}
		}
		if err := f.validate(); err != nil {
			return fmt.Errorf("rpcs.%s: %w", m, err)
		}
	}
	if err := p.Events.validate(); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if err := p.Restart.validate(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// For returns the faults that apply to method (its own entry, else "*").
func (p *Plan) For(method string) RPCFaults {
	if f, ok := p.RPCs[method]; ok {
		return f
	}
	return p.RPCs[AnyMethod]
}

// Empty reports whether p injects nothing.
func (p *Plan) Empty() bool {
	for _, f := range p.RPCs {
		if f.Error+f.ErrorAfter+f.Hang+f.HangAfter > 0 || f.Latency.rate() > 0 {
			return false
		}
	}
	e := p.Events
	return e.Drop+e.Duplicate+e.Reorder+e.Break == 0 && !p.Restart.any()
}

// any reports whether r ever restarts.
func (r Restart) any() bool { return r.Rate > 0 || len(r.AtCalls) > 0 }

func (f RPCFaults) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"error", f.Error}, {"errorAfter", f.ErrorAfter}, {"hang", f.Hang}, {"hangAfter", f.HangAfter}} {
		if err := checkRate(r.name, r.v); err != nil {
			return err
		}
	}
	if sum := f.Error + f.ErrorAfter + f.Hang + f.HangAfter; sum > 1+1e-9 {
		return fmt.Errorf("error+errorAfter+hang+hangAfter is %g: the faults of one call exclude each other, so the sum must be at most 1", sum)
	}
	if f.Error+f.ErrorAfter > 0 && len(f.Codes) == 0 {
		return errors.New("codes: required when error or errorAfter is set")
	}
	for _, c := range f.Codes {
		if codes.Code(c) == codes.OK {
			return errors.New("codes: OK is not an error")
		}
	}
	if err := f.Latency.validate(); err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	return nil
}

func (e EventFaults) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"drop", e.Drop}, {"duplicate", e.Duplicate}, {"reorder", e.Reorder}, {"break", e.Break}} {
		if err := checkRate(r.name, r.v); err != nil {
			return err
		}
	}
	if sum := e.Drop + e.Duplicate + e.Reorder + e.Break; sum > 1+1e-9 {
		return fmt.Errorf("drop+duplicate+reorder+break is %g: the faults of one event exclude each other, so the sum must be at most 1", sum)
	}
	if e.ReorderWindow < 0 {
		return fmt.Errorf("reorderWindow %v is negative", time.Duration(e.ReorderWindow))
	}
	return nil
}

func (r Restart) validate() error {
	if err := checkRate("rate", r.Rate); err != nil {
		return err
	}
	if !r.Mode.Valid() {
		return fmt.Errorf("mode %q: want %s, %s or %s", r.Mode, RestartKeep, RestartReboot, RestartWipe)
	}
	if r.Downtime < 0 {
		return fmt.Errorf("downtime %v is negative", time.Duration(r.Downtime))
	}
	return nil
}

func (l Latency) validate() error {
	if l.Rate != nil {
		if err := checkRate("rate", *l.Rate); err != nil {
			return err
		}
	}
	neg := func(name string, d Duration) error {
		if d < 0 {
			return fmt.Errorf("%s %v is negative", name, time.Duration(d))
		}
		return nil
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"value", l.Value}, {"min", l.Min}, {"max", l.Max}, {"mean", l.Mean}, {"median", l.Median}} {
		if err := neg(d.name, d.v); err != nil {
			return err
		}
	}
	switch l.Distribution {
	case "":
		if l.Rate != nil || l.Value+l.Min+l.Max+l.Mean+l.Median != 0 || l.Sigma != 0 {
			return errors.New("distribution: required (fixed, uniform, exponential or lognormal)")
		}
	case Fixed:
	case Uniform:
		if l.Max < l.Min {
			return fmt.Errorf("uniform: max %v is below min %v", time.Duration(l.Max), time.Duration(l.Min))
		}
	case Exponential:
		if l.Mean <= 0 {
			return errors.New("exponential: mean must be positive")
		}
	case LogNormal:
		if l.Median <= 0 {
			return errors.New("lognormal: median must be positive")
		}
		if l.Sigma < 0 || math.IsNaN(l.Sigma) || math.IsInf(l.Sigma, 0) {
			return fmt.Errorf("lognormal: sigma %g must be a non-negative number", l.Sigma)
		}
	default:
		return fmt.Errorf("distribution %q: want fixed, uniform, exponential or lognormal", l.Distribution)
	}
	return nil
}

// rate is the probability that a call is delayed.
func (l Latency) rate() float64 {
	if l.Distribution == "" {
		return 0
	}
	if l.Rate == nil {
		return 1
	}
	return *l.Rate
}

func checkRate(name string, v float64) error {
	if !(v >= 0 && v <= 1) { // also catches NaN
		return fmt.Errorf("%s: rate %g is not in [0, 1]", name, v)
	}
	return nil
}
