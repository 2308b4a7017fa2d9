package logrotate

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The kubelet's defaults for the container log fields of KubeletConfiguration.
const (
	// DefaultMaxSize is containerLogMaxSize's default, "10Mi".
	DefaultMaxSize int64 = 10 << 20
	// DefaultMaxFiles is containerLogMaxFiles's default.
	DefaultMaxFiles = 5
	// DefaultMonitorInterval is containerLogMonitorInterval's default.
	DefaultMonitorInterval = 10 * time.Second
	// DefaultMaxWorkers is containerLogMaxWorkers's default.
	DefaultMaxWorkers = 1
	// MinMonitorInterval is the shortest containerLogMonitorInterval the kubelet accepts.
	MinMonitorInterval = 3 * time.Second
)

// Policy says when and how container logs are rotated. Its fields mirror the
// KubeletConfiguration fields named in their comments.
type Policy struct {
	// MaxSize (containerLogMaxSize): a current log of at least this many bytes is rotated.
	// Negative disables rotation (as in the kubelet); zero is invalid.
	MaxSize int64
	// MaxFiles (containerLogMaxFiles): the most log files kept per container, counting the
	// current log. At least 2.
	MaxFiles int
	// MonitorInterval (containerLogMonitorInterval): how often Run makes a pass. At least
	// MinMonitorInterval.
	MonitorInterval time.Duration
	// MaxWorkers (containerLogMaxWorkers): how many containers a pass handles at once. At
	// least 1.
	MaxWorkers int
}

// DefaultPolicy is the kubelet's default policy: 10Mi, 5 files, every 10s, 1 worker.
func DefaultPolicy() Policy {
	return Policy{
		MaxSize:         DefaultMaxSize,
		MaxFiles:        DefaultMaxFiles,
		MonitorInterval: DefaultMonitorInterval,
		MaxWorkers:      DefaultMaxWorkers,
	}
}

// Enabled reports whether the policy rotates at all (MaxSize is not negative).
func (p Policy) Enabled() bool { return p.MaxSize >= 0 }

// PolicyFromConfig reads the container log fields of c: an unset field ("" or nil) gets the
// kubelet's default. The result is validated; errors name the KubeletConfiguration field.
// c nil gives DefaultPolicy.
func PolicyFromConfig(c *kubeletconfigv1beta1.KubeletConfiguration) (Policy, error) {
	p := DefaultPolicy()
	if c == nil {
		return p, nil
	}
	var errs field.ErrorList
	if c.ContainerLogMaxSize != "" {
		// On a parse error MaxSize keeps its default, so that only the other fields are
		// validated below and the error is reported once.
		if size, err := ParseMaxSize(c.ContainerLogMaxSize); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("containerLogMaxSize"), c.ContainerLogMaxSize, err.Error()))
		} else {
			p.MaxSize = size
		}
	}
	if c.ContainerLogMaxFiles != nil {
		p.MaxFiles = int(*c.ContainerLogMaxFiles)
	}
	if c.ContainerLogMonitorInterval != nil {
		p.MonitorInterval = c.ContainerLogMonitorInterval.Duration
	}
	if c.ContainerLogMaxWorkers != nil {
		p.MaxWorkers = int(*c.ContainerLogMaxWorkers)
	}
	if err := append(errs, p.fieldErrors()...).ToAggregate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// ParseMaxSize parses a containerLogMaxSize value, a resource.Quantity such as "10Mi", to
// bytes.
func ParseMaxSize(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, err
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("%s is not a whole number of bytes", q.String())
	}
	return n, nil
}

// Validate reports every invalid field, named by its KubeletConfiguration JSON path: MaxSize
// not zero, MaxFiles >= 2, MonitorInterval >= MinMonitorInterval, MaxWorkers >= 1.
func (p Policy) Validate() error { return p.fieldErrors().ToAggregate() }

func (p Policy) fieldErrors() field.ErrorList {
	var errs field.ErrorList
	if p.MaxSize == 0 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxSize"), p.MaxSize,
			"must be positive, or negative to disable rotation"))
	}
	if p.MaxFiles < 2 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxFiles"), p.MaxFiles,
			"must be greater than 1"))
	}
	if p.MonitorInterval < MinMonitorInterval {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMonitorInterval"), p.MonitorInterval.String(),
			"must be at least "+MinMonitorInterval.String()))
	}
	if p.MaxWorkers < 1 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxWorkers"), p.MaxWorkers,
			"must be at least 1"))
	}
	return errs
}
