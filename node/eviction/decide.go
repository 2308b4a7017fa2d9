package eviction

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// State is what a pass remembers for the next. The zero State is the state
// before the first pass. Decide never modifies the State it is given.
type State struct {
	// FirstMet is when each threshold met in the last pass was first seen
	// met, ignoring grace periods. A threshold that stops being met is
	// dropped, so a soft threshold's grace period counts from the start of
	// its current run of being met.
	FirstMet map[Key]time.Time
	// ConditionLastSeen is when each pressure condition was last seen set
	// by a met threshold; kept for the transition period only.
	ConditionLastSeen map[corev1.NodeConditionType]time.Time
	// Acting holds the thresholds that acted (met past their grace period)
	// in the last pass; they stay met until their minimum reclaim is freed.
	Acting map[Key]bool
	// ObservedAt is the time of each signal's observation in the last pass.
	ObservedAt map[Signal]time.Time
}

// Input is everything one decision needs.
type Input struct {
	Config       Config
	State        State
	Observations Observations
	// Pods are the pods that may be evicted: the node's active pods.
	// Terminal and critical pods among them are skipped.
	Pods []*corev1.Pod
	Now  time.Time
}

// Eviction is one pod to evict, with the kubelet's reason and message and
// the grace period to kill it with.
type Eviction struct {
	Pod     *corev1.Pod
	Signal  Signal
	Reason  string
	Message string
	// GracePeriod is 0 for a hard threshold; for a soft one, the pod's
	// terminationGracePeriodSeconds capped by Config.MaxPodGracePeriod.
	GracePeriod time.Duration
}

// Decision is the outcome of one pass.
type Decision struct {
	// State is to be passed to the next Decide.
	State State
	// Pressure is the pressure conditions that are true, in the order
	// MemoryPressure, DiskPressure, PIDPressure: those of thresholds met
	// now (soft ones already during their grace period) or within the
	// transition period.
	Pressure []corev1.NodeConditionType
	// Met is the thresholds past their grace period (Key order: signal,
	// hard before soft); after a node-level reclaim, Resolved(Met, ...)
	// tells whether eviction is still needed.
	Met []Threshold
	// Starved is the threshold to act on now, nil when none: the first of
	// Met whose signal was measured anew since the last pass.
	Starved *Threshold
	// Reclaim is set when Starved's signal may be relieved by node-level
	// reclaim (dead containers, unused images), to be tried before
	// evicting.
	Reclaim bool
	// Candidates are the pods to evict for Starved, most evictable first.
	// At most one is to be evicted per pass: the first whose eviction
	// succeeds.
	Candidates []Eviction
}

// Taints are the NoSchedule taints matching d.Pressure.
func (d Decision) Taints() []corev1.Taint { return Taints(d.Pressure) }

// Decide is one pass of node-pressure eviction, with no I/O: which
// thresholds are met, which pressure conditions hold, and which pods to
// evict in which order. See the package doc for the rules.
func Decide(in Input) Decision {
	now := in.Now
	prev := in.State
	obs := in.Observations.Signals

	// Thresholds met now, plus those that acted last pass and have not yet
	// freed their minimum reclaim.
	var met []Threshold
	for _, t := range in.Config.Thresholds {
		o, ok := obs[t.Signal]
		if ok && (t.met(o, false) || (prev.Acting[t.Key()] && t.met(o, true))) {
			met = append(met, t)
		}
	}

	next := State{
		FirstMet:          make(map[Key]time.Time, len(met)),
		ConditionLastSeen: make(map[corev1.NodeConditionType]time.Time),
		Acting:            make(map[Key]bool),
		ObservedAt:        make(map[Signal]time.Time, len(obs)),
	}
	for _, t := range met {
		at, ok := prev.FirstMet[t.Key()]
		if !ok {
			at = now
		}
		next.FirstMet[t.Key()] = at
		next.ConditionLastSeen[t.Signal.Condition()] = now
	}
	period := in.Config.PressureTransitionPeriod
	if period <= 0 {
		period = DefaultPressureTransitionPeriod
	}
	for c, at := range prev.ConditionLastSeen {
		if _, seen := next.ConditionLastSeen[c]; !seen && now.Sub(at) < period {
			next.ConditionLastSeen[c] = at
		}
	}
	for s, o := range obs {
		next.ObservedAt[s] = o.Time
	}

	d := Decision{State: next}
	for _, c := range pressureOrder {
		if _, ok := next.ConditionLastSeen[c]; ok {
			d.Pressure = append(d.Pressure, c)
		}
	}

	for _, t := range met {
		if !t.Soft || now.Sub(next.FirstMet[t.Key()]) >= t.GracePeriod {
			d.Met = append(d.Met, t)
			next.Acting[t.Key()] = true
		}
	}
	slices.SortStableFunc(d.Met, func(a, b Threshold) int { return cmpKey(a.Key(), b.Key()) })

	for i, t := range d.Met {
		o := obs[t.Signal]
		last, seen := prev.ObservedAt[t.Signal]
		if !seen || o.Time.IsZero() || o.Time.After(last) {
			d.Starved = &d.Met[i]
			break
		}
	}
	if d.Starved == nil {
		return d
	}
	t := *d.Starved
	d.Reclaim = t.Signal.NodeReclaimable()
	cs := candidates(t.Signal, in.Pods, in.Observations)
	rank(t.Signal, cs)
	for _, c := range cs {
		d.Candidates = append(d.Candidates, Eviction{
			Pod: c.pod, Signal: t.Signal, Reason: Reason,
			Message:     message(t, obs[t.Signal], c),
			GracePeriod: gracePeriod(t, c.pod, in.Config.MaxPodGracePeriod),
		})
	}
	return d
}

// Resolved reports whether none of met is still met on obs, counting
// minimum reclaim: after a node-level reclaim, no pod needs to be evicted.
func Resolved(met []Threshold, obs Observations) bool {
	for _, t := range met {
		if o, ok := obs.Signals[t.Signal]; ok && t.met(o, true) {
			return false
		}
	}
	return true
}

// gracePeriod is 0 for a hard threshold; for a soft one, the pod's
// termination grace period (maxPod when unset) capped by maxPod.
func gracePeriod(t Threshold, pod *corev1.Pod, maxPod time.Duration) time.Duration {
	if !t.Soft {
		return 0
	}
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return min(maxPod, time.Duration(*s)*time.Second)
	}
	return maxPod
}

func cmpKey(a, b Key) int {
	if c := a.Signal.order() - b.Signal.order(); c != 0 {
		return c
	}
	return cmpTrueFirst(!a.Soft, !b.Soft)
}

// pressureOrder is the order of the pressure conditions in a node status.
var pressureOrder = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}
