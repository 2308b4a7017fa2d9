package faults

import (
	"math"
	"math/rand/v2"
	"time"
)

// sample draws a delay from l's distribution.
func (l Latency) sample(r *rand.Rand) time.Duration {
	var d float64 // nanoseconds
	switch l.Distribution {
	case Fixed:
		return time.Duration(l.Value)
	case Uniform:
		d = float64(l.Min) + r.Float64()*float64(l.Max-l.Min)
	case Exponential:
		d = r.ExpFloat64() * float64(l.Mean)
	case LogNormal:
		d = float64(l.Median) * math.Exp(l.Sigma*r.NormFloat64())
	default:
		return 0
	}
	if l.Max > 0 && d > float64(l.Max) {
		return time.Duration(l.Max)
	}
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}
