package eviction

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// DefaultPressureTransitionPeriod is the kubelet's default
// evictionPressureTransitionPeriod.
const DefaultPressureTransitionPeriod = 5 * time.Minute

// Errors of ParseConfig, wrapped with the setting and entry at fault.
var (
	// ErrUnknownSignal: an entry names a signal that is not supported.
	ErrUnknownSignal = errors.New("unknown eviction signal")
	// ErrBadValue: a threshold, grace period or minimum reclaim does not
	// parse or is out of range.
	ErrBadValue = errors.New("invalid eviction value")
	// ErrNoGracePeriod: a soft threshold has no evictionSoftGracePeriod.
	ErrNoGracePeriod = errors.New("soft eviction threshold has no grace period")
)

// DefaultEvictionHard is the kubelet's default evictionHard, used when the
// configuration leaves it unset (nil).
func DefaultEvictionHard() map[string]string {
	return map[string]string{
		string(SignalMemoryAvailable):  "100Mi",
		string(SignalNodeFsAvailable):  "10%",
		string(SignalNodeFsInodesFree): "5%",
		string(SignalImageFsAvailable): "15%",
	}
}

// ParseConfig reads the eviction settings of a kubelet configuration:
// evictionHard (DefaultEvictionHard when nil; merged under the configured
// entries when mergeDefaultEvictionSettings is true), evictionSoft,
// evictionSoftGracePeriod, evictionMinimumReclaim,
// evictionPressureTransitionPeriod (0: 5m) and evictionMaxPodGracePeriod.
//
// As in the kubelet, a threshold of "0%" or "100%" disables the signal, an
// explicitly empty evictionHard means no hard thresholds, and a grace period
// for a signal with no soft threshold is ignored. Errors name the setting
// and entry at fault and wrap ErrUnknownSignal, ErrBadValue or
// ErrNoGracePeriod. A nil kc gives the defaults.
func ParseConfig(kc *kubeletconfigv1beta1.KubeletConfiguration) (Config, error) {
	if kc == nil {
		kc = &kubeletconfigv1beta1.KubeletConfiguration{}
	}
	hardSpec := kc.EvictionHard
	switch {
	case hardSpec == nil:
		hardSpec = DefaultEvictionHard()
	case kc.MergeDefaultEvictionSettings != nil && *kc.MergeDefaultEvictionSettings:
		merged := DefaultEvictionHard()
		maps.Copy(merged, hardSpec)
		hardSpec = merged
	}
	hard, err := parseThresholds("evictionHard", hardSpec, false)
	if err != nil {
		return Config{}, err
	}
	soft, err := parseThresholds("evictionSoft", kc.EvictionSoft, true)
	if err != nil {
		return Config{}, err
	}
	graces, err := parseGracePeriods(kc.EvictionSoftGracePeriod)
	if err != nil {
		return Config{}, err
	}
	reclaims, err := parseMinReclaims(kc.EvictionMinimumReclaim)
	if err != nil {
		return Config{}, err
	}
	for i := range soft {
		g, ok := graces[soft[i].Signal]
		if !ok {
			return Config{}, fmt.Errorf("evictionSoft[%q]: %w: set evictionSoftGracePeriod[%q]",
				soft[i].Signal, ErrNoGracePeriod, soft[i].Signal)
		}
		soft[i].GracePeriod = g
	}
	cfg := Config{
		Thresholds:               append(hard, soft...),
		PressureTransitionPeriod: kc.EvictionPressureTransitionPeriod.Duration,
		MaxPodGracePeriod:        time.Duration(kc.EvictionMaxPodGracePeriod) * time.Second,
	}
	for i := range cfg.Thresholds {
		if r, ok := reclaims[cfg.Thresholds[i].Signal]; ok {
			cfg.Thresholds[i].MinReclaim = &r
		}
	}
	switch {
	case cfg.PressureTransitionPeriod < 0:
		return Config{}, fmt.Errorf("evictionPressureTransitionPeriod %v: %w: must not be negative",
			cfg.PressureTransitionPeriod, ErrBadValue)
	case cfg.PressureTransitionPeriod == 0:
		cfg.PressureTransitionPeriod = DefaultPressureTransitionPeriod
	}
	if kc.EvictionMaxPodGracePeriod < 0 {
		return Config{}, fmt.Errorf("evictionMaxPodGracePeriod %d: %w: must not be negative",
			kc.EvictionMaxPodGracePeriod, ErrBadValue)
	}
	return cfg, nil
}

// sortedSignals returns the keys of m, checked to be supported signals, in
// a stable order so that the first error is always the same one.
func sortedSignals(setting string, m map[string]string) ([]Signal, error) {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]Signal, 0, len(keys))
	for _, k := range keys {
		s := Signal(k)
		if !s.Valid() {
			return nil, fmt.Errorf("%s[%q]: %w (supported: %s)", setting, k, ErrUnknownSignal, supportedList())
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Signal) int { return a.order() - b.order() })
	return out, nil
}

func supportedList() string {
	names := make([]string, len(Signals))
	for i, s := range Signals {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func parseThresholds(setting string, m map[string]string, soft bool) ([]Threshold, error) {
	signals, err := sortedSignals(setting, m)
	if err != nil {
		return nil, err
	}
	var out []Threshold
	for _, s := range signals {
		raw := strings.TrimSpace(m[string(s)])
		if raw == "0%" || raw == "100%" {
			continue // disabled, as in the kubelet
		}
		v, err := parseValue(raw)
		if err == nil && v.Quantity == nil && (v.Fraction <= 0 || v.Fraction > 1) {
			err = errors.New("percentage must be in (0%, 100%]")
		}
		if err == nil && v.Quantity != nil && v.Quantity.Sign() <= 0 {
			err = errors.New("quantity must be positive")
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%q] = %q: %w: %w", setting, s, raw, ErrBadValue, err)
		}
		out = append(out, Threshold{Signal: s, Value: v, Soft: soft})
	}
	return out, nil
}

func parseValue(raw string) (Value, error) {
	if pct, ok := strings.CutSuffix(raw, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return Value{}, fmt.Errorf("bad percentage: %w", err)
		}
		return Value{Fraction: f / 100}, nil
	}
	q, err := resource.ParseQuantity(raw)
	if err != nil {
		return Value{}, err
	}
	return Value{Quantity: &q}, nil
}

func parseGracePeriods(m map[string]string) (map[Signal]time.Duration, error) {
	const setting = "evictionSoftGracePeriod"
	signals, err := sortedSignals(setting, m)
	if err != nil {
		return nil, err
	}
	out := make(map[Signal]time.Duration, len(signals))
	for _, s := range signals {
		raw := strings.TrimSpace(m[string(s)])
		d, err := time.ParseDuration(raw)
		if err == nil && d < 0 {
			err = errors.New("must not be negative")
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%q] = %q: %w: %w", setting, s, raw, ErrBadValue, err)
		}
		out[s] = d
	}
	return out, nil
}

func parseMinReclaims(m map[string]string) (map[Signal]Value, error) {
	const setting = "evictionMinimumReclaim"
	signals, err := sortedSignals(setting, m)
	if err != nil {
		return nil, err
	}
	out := make(map[Signal]Value, len(signals))
	for _, s := range signals {
		raw := strings.TrimSpace(m[string(s)])
		v, err := parseValue(raw)
		if err == nil && v.Quantity == nil && (v.Fraction <= 0 || v.Fraction > 1) {
			err = errors.New("percentage must be in (0%, 100%]")
		}
		if err == nil && v.Quantity != nil && v.Quantity.Sign() < 0 {
			err = errors.New("quantity must not be negative")
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%q] = %q: %w: %w", setting, s, raw, ErrBadValue, err)
		}
		out[s] = v
	}
	return out, nil
}
