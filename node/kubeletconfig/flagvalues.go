package kubeletconfig

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The pflag values of the KubeletConfiguration fields that v1beta1 keeps
// behind pointers (the kubelet binds its flags to the internal type, which
// has none): Set allocates, String reads through nil as the zero value.

type boolPtr struct{ p **bool }

func (v boolPtr) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*v.p = &b
	return nil
}
func (v boolPtr) String() string {
	if *v.p == nil {
		return "false"
	}
	return strconv.FormatBool(**v.p)
}
func (v boolPtr) Type() string     { return "bool" }
func (v boolPtr) IsBoolFlag() bool { return true }

type int32Ptr struct{ p **int32 }

func (v int32Ptr) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil {
		return err
	}
	i := int32(n)
	*v.p = &i
	return nil
}
func (v int32Ptr) String() string {
	if *v.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(**v.p), 10)
}
func (v int32Ptr) Type() string { return "int32" }

type int64Ptr struct{ p **int64 }

func (v int64Ptr) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return err
	}
	*v.p = &n
	return nil
}
func (v int64Ptr) String() string {
	if *v.p == nil {
		return "0"
	}
	return strconv.FormatInt(**v.p, 10)
}
func (v int64Ptr) Type() string { return "int64" }

type stringPtr struct{ p **string }

func (v stringPtr) Set(s string) error {
	*v.p = &s
	return nil
}
func (v stringPtr) String() string {
	if *v.p == nil {
		return ""
	}
	return **v.p
}
func (v stringPtr) Type() string { return "string" }

type durationPtr struct{ p **metav1.Duration }

func (v durationPtr) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.p = &metav1.Duration{Duration: d}
	return nil
}
func (v durationPtr) String() string {
	if *v.p == nil {
		return "0s"
	}
	return (*v.p).Duration.String()
}
func (v durationPtr) Type() string { return "duration" }

// ipValue is the kubelet's IPVar: an IP address; an empty value leaves the
// field as it was.
type ipValue struct{ p *string }

func (v ipValue) Set(s string) error {
	if s == "" {
		return nil
	}
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not a valid IP address", s)
	}
	*v.p = s
	return nil
}
func (v ipValue) String() string { return *v.p }
func (v ipValue) Type() string   { return "ip" }

// taintsValue is the kubelet's --register-with-taints:
// "<key>=<value>:<effect>" or "<key>:<effect>", comma-separated.
type taintsValue struct{ p *[]corev1.Taint }

func (v taintsValue) Set(s string) error {
	if s == "" {
		*v.p = nil
		return nil
	}
	var taints []corev1.Taint
	for _, spec := range strings.Split(s, ",") {
		t, err := ParseTaint(spec)
		if err != nil {
			return err
		}
		taints = append(taints, t)
	}
	*v.p = taints
	return nil
}
func (v taintsValue) String() string {
	var out []string
	for _, t := range *v.p {
		out = append(out, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	return strings.Join(out, ",")
}
func (v taintsValue) Type() string { return "[]v1.Taint" }

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// ParseTaint reads one taint as --register-with-taints takes it:
// key=value:Effect or key:Effect, with the API's rules for key and value.
func ParseTaint(spec string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(spec, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", spec)
	}
	key, value, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	if err := checkTaint(t); err != nil {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec %q: %w", spec, err)
	}
	return t, nil
}

func checkTaint(t corev1.Taint) error {
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return fmt.Errorf("invalid taint key %q: %s", t.Key, strings.Join(errs, "; "))
	}
	if t.Value != "" {
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("invalid taint value %q: %s", t.Value, strings.Join(errs, "; "))
		}
	}
	for _, e := range taintEffects {
		if t.Effect == e {
			return nil
		}
	}
	return fmt.Errorf("invalid taint effect %q, unsupported taint effect", t.Effect)
}

// reservedMemoryValue is the kubelet's --reserved-memory:
// "<numa node>:<type>=<quantity>[,...]", ";"-separated, repeatable.
type reservedMemoryValue struct {
	p           *[]kubeletconfigv1beta1.MemoryReservation
	initialized bool
}

func (v *reservedMemoryValue) Set(s string) error {
	if s == "" {
		return nil
	}
	if !v.initialized || *v.p == nil {
		*v.p = []kubeletconfigv1beta1.MemoryReservation{}
		v.initialized = true
	}
	for _, reservation := range strings.Split(s, ";") {
		node, limits, ok := strings.Cut(reservation, ":")
		if !ok || strings.Contains(limits, ":") {
			return fmt.Errorf("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s", reservation)
		}
		id, err := strconv.Atoi(node)
		if err != nil {
			return fmt.Errorf("failed to convert the NUMA node ID, expected integer, got %s", node)
		}
		r := kubeletconfigv1beta1.MemoryReservation{NumaNode: int32(id), Limits: corev1.ResourceList{}}
		for _, limit := range strings.Split(limits, ",") {
			name, qty, ok := strings.Cut(limit, "=")
			if !ok || strings.Contains(qty, "=") {
				return fmt.Errorf("the reserved limit has incorrect value, expected type=quantity, got %s", limit)
			}
			rn := corev1.ResourceName(name)
			if rn != corev1.ResourceMemory && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
				return fmt.Errorf("memory type conversion error, unknown type: %q", rn)
			}
			q, err := resource.ParseQuantity(qty)
			if err != nil {
				return fmt.Errorf("failed to parse the quantity: %s", qty)
			}
			r.Limits[rn] = q
		}
		*v.p = append(*v.p, r)
	}
	return nil
}
func (v *reservedMemoryValue) String() string {
	var out []string
	for _, r := range *v.p {
		var limits []string
		for name, q := range r.Limits {
			limits = append(limits, fmt.Sprintf("%s=%s", name, q.String()))
		}
		sort.Strings(limits)
		out = append(out, fmt.Sprintf("%d:%s", r.NumaNode, strings.Join(limits, ",")))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
func (v *reservedMemoryValue) Type() string { return "reserved-memory" }
