package faults

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
)

// Action is what a fault does to one call.
type Action int

// Actions, see RPCFaults.
const (
	Pass Action = iota
	FailBefore
	FailAfter
	HangBefore
	HangAfter
)

var actionNames = [...]string{Pass: "pass", FailBefore: "error", FailAfter: "error-after", HangBefore: "hang", HangAfter: "hang-after"}

func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Call is the fault of one RPC call: the n-th call (from 0) of Method.
type Call struct {
	Method string
	N      uint64
	Action Action
	// Code is the error of FailBefore and FailAfter.
	Code codes.Code
	// Delay is waited before the call reaches the runtime (0: none).
	Delay time.Duration
}

// DecideCall returns the fault of the n-th call of method under plan p and
// seed. It is a pure function: the same arguments give the same Call.
func DecideCall(p *Plan, seed uint64, method string, n uint64) Call {
	f := p.For(method)
	r := draw(seed, method, n)
	// A fixed number of draws in a fixed order, whatever is decided.
	u, pick, lu := r.Float64(), r.Uint64(), r.Float64()
	c := Call{Method: method, N: n}
	switch {
	case u < f.Error:
		c.Action = FailBefore
	case u < f.Error+f.ErrorAfter:
		c.Action = FailAfter
	case u < f.Error+f.ErrorAfter+f.Hang:
		c.Action = HangBefore
	case u < f.Error+f.ErrorAfter+f.Hang+f.HangAfter:
		c.Action = HangAfter
	}
	if (c.Action == FailBefore || c.Action == FailAfter) && len(f.Codes) > 0 {
		c.Code = codes.Code(f.Codes[pick%uint64(len(f.Codes))])
	}
	if lu < f.Latency.rate() {
		c.Delay = f.Latency.sample(r)
	}
	return c
}

// EventAction is what a fault does to one event of a stream.
type EventAction int

// Event actions, see EventFaults.
const (
	Deliver EventAction = iota
	Drop
	Duplicate
	Reorder
	Break
)

var eventActionNames = [...]string{Deliver: "deliver", Drop: "event-drop", Duplicate: "event-duplicate", Reorder: "event-reorder", Break: "stream-break"}

func (a EventAction) String() string {
	if a >= 0 && int(a) < len(eventActionNames) {
		return eventActionNames[a]
	}
	return fmt.Sprintf("EventAction(%d)", int(a))
}

// DecideEvent returns the fault of the k-th event (from 0) of the stream
// opened by the n-th GetContainerEvents call. Pure, as DecideCall.
func DecideEvent(e EventFaults, seed, stream, k uint64) EventAction {
	u := draw(seed, "events", stream<<32^k).Float64()
	switch {
	case u < e.Drop:
		return Drop
	case u < e.Drop+e.Duplicate:
		return Duplicate
	case u < e.Drop+e.Duplicate+e.Reorder:
		return Reorder
	case u < e.Drop+e.Duplicate+e.Reorder+e.Break:
		return Break
	}
	return Deliver
}

// DecideRestart reports whether the n-th RPC call (from 0, over all
// methods) restarts the runtime. Pure, as DecideCall.
func DecideRestart(r Restart, seed, n uint64) bool {
	return slices.Contains(r.AtCalls, n) || r.Rate > 0 && draw(seed, "restart", n).Float64() < r.Rate
}
