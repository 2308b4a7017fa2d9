package imagegc

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The kubelet's defaults for the image GC fields of KubeletConfiguration.
const (
	DefaultHighThresholdPercent = 85
	DefaultLowThresholdPercent  = 80
	DefaultMinAge               = 2 * time.Minute
	// DefaultPeriod is how often Run collects (the kubelet's ImageGCPeriod).
	DefaultPeriod = 5 * time.Minute
)

// Policy says when images are removed. Its fields mirror the
// KubeletConfiguration fields named in their comments.
type Policy struct {
	// HighThresholdPercent (imageGCHighThresholdPercent): image filesystem
	// usage, in percent, at or above which a pass frees space.
	HighThresholdPercent int
	// LowThresholdPercent (imageGCLowThresholdPercent): the usage, in
	// percent, a pass frees down to. Less than HighThresholdPercent.
	LowThresholdPercent int
	// MinAge (imageMinimumGCAge): images seen for less than this are kept.
	MinAge time.Duration
	// MaxAge (imageMaximumGCAge): unused images idle for longer than this
	// are removed whatever the usage. 0 disables it; otherwise it must be
	// greater than MinAge.
	MaxAge time.Duration
}

// DefaultPolicy is the kubelet's default policy: 85%, 80%, 2m, no max age.
func DefaultPolicy() Policy {
	return Policy{
		HighThresholdPercent: DefaultHighThresholdPercent,
		LowThresholdPercent:  DefaultLowThresholdPercent,
		MinAge:               DefaultMinAge,
	}
}

// PolicyFromConfig reads the image GC fields of c: an unset threshold (nil)
// or a zero imageMinimumGCAge gets the kubelet's default. The result is
// validated; c nil gives DefaultPolicy.
func PolicyFromConfig(c *kubeletconfigv1beta1.KubeletConfiguration) (Policy, error) {
	p := DefaultPolicy()
	if c == nil {
		return p, nil
	}
	if c.ImageGCHighThresholdPercent != nil {
		p.HighThresholdPercent = int(*c.ImageGCHighThresholdPercent)
	}
	if c.ImageGCLowThresholdPercent != nil {
		p.LowThresholdPercent = int(*c.ImageGCLowThresholdPercent)
	}
	if c.ImageMinimumGCAge.Duration != 0 {
		p.MinAge = c.ImageMinimumGCAge.Duration
	}
	p.MaxAge = c.ImageMaximumGCAge.Duration
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// Validate reports every invalid field, named by its KubeletConfiguration
// JSON path: thresholds within 0..100 with low < high, MinAge >= 0, and MaxAge
// either 0 or greater than MinAge.
func (p Policy) Validate() error {
	var errs field.ErrorList
	high := field.NewPath("imageGCHighThresholdPercent")
	low := field.NewPath("imageGCLowThresholdPercent")
	if p.HighThresholdPercent < 0 || p.HighThresholdPercent > 100 {
		errs = append(errs, field.Invalid(high, p.HighThresholdPercent, "must be between 0 and 100, inclusive"))
	}
	if p.LowThresholdPercent < 0 || p.LowThresholdPercent > 100 {
		errs = append(errs, field.Invalid(low, p.LowThresholdPercent, "must be between 0 and 100, inclusive"))
	}
	if p.LowThresholdPercent >= p.HighThresholdPercent {
		errs = append(errs, field.Invalid(low, p.LowThresholdPercent,
			"must be less than imageGCHighThresholdPercent"))
	}
	if p.MinAge < 0 {
		errs = append(errs, field.Invalid(field.NewPath("imageMinimumGCAge"), p.MinAge.String(), "must not be negative"))
	}
	maxAge := field.NewPath("imageMaximumGCAge")
	switch {
	case p.MaxAge < 0:
		errs = append(errs, field.Invalid(maxAge, p.MaxAge.String(), "must not be negative"))
	case p.MaxAge > 0 && p.MaxAge <= p.MinAge:
		errs = append(errs, field.Invalid(maxAge, p.MaxAge.String(),
			"must be greater than imageMinimumGCAge ("+p.MinAge.String()+") or 0 to disable"))
	}
	return errs.ToAggregate()
}
