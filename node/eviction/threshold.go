package eviction

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Value is a threshold or minimum-reclaim amount: an absolute Quantity, or,
// when Quantity is nil, a Fraction of the signal's capacity (0.1 for 10%).
type Value struct {
	Quantity *resource.Quantity
	Fraction float64
}

// Of is the amount v stands for on a signal of the given capacity.
func (v Value) Of(capacity resource.Quantity) resource.Quantity {
	if v.Quantity != nil {
		return v.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(int64(float64(capacity.Value())*v.Fraction), resource.BinarySI)
}

// String is v as configured: "100Mi" or "10%".
func (v Value) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(v.Fraction*100, 'f', -1, 64) + "%"
}

// Threshold is one eviction threshold: met while the signal's available
// amount is below Value.
//
// A hard threshold (Soft false) acts as soon as it is met and evicts with no
// grace period. A soft threshold acts only once it has been met
// continuously for GracePeriod, and evicts with the pod's own termination
// grace period capped by Config.MaxPodGracePeriod.
//
// Once a threshold has acted, it stays met until the available amount is
// back above Value plus MinReclaim (when set), so each round of eviction
// frees at least MinReclaim.
type Threshold struct {
	Signal      Signal
	Value       Value
	Soft        bool
	GracePeriod time.Duration
	MinReclaim  *Value
}

// Key identifies a threshold within a Config: a signal has at most one hard
// and one soft threshold.
type Key struct {
	Signal Signal
	Soft   bool
}

// Key is t's key.
func (t Threshold) Key() Key { return Key{Signal: t.Signal, Soft: t.Soft} }

// String is t as in the kubelet's flags, e.g. "memory.available<100Mi" or
// "memory.available<1Gi (soft, grace 1m30s)".
func (t Threshold) String() string {
	s := string(t.Signal) + "<" + t.Value.String()
	if t.Soft {
		s += fmt.Sprintf(" (soft, grace %v)", t.GracePeriod)
	}
	return s
}

// met reports whether t is met by o; withMinReclaim raises the bar by
// MinReclaim, for a threshold that has already acted.
func (t Threshold) met(o Observation, withMinReclaim bool) bool {
	q := t.Value.Of(o.Capacity)
	if withMinReclaim && t.MinReclaim != nil {
		q.Add(t.MinReclaim.Of(o.Capacity))
	}
	return q.Cmp(o.Available) > 0
}

// Config is the node-pressure eviction configuration.
type Config struct {
	// Thresholds are the hard and soft thresholds, hard first, each group
	// in the order of Signals.
	Thresholds []Threshold
	// PressureTransitionPeriod is how long a pressure condition stays true
	// after its last threshold stopped being met (default 5m).
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriod caps the pod's termination grace period on soft
	// evictions. As in the kubelet, 0 (the default) means soft evictions
	// are immediate too.
	MaxPodGracePeriod time.Duration
}
