package actorletv1

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Name returns the event's kind, e.g. "ContainerStarted", or "" if unset.
func (x *Event) Name() string {
	if inner := x.inner(); inner != nil {
		return string(inner.Descriptor().Name())
	}
	return ""
}

func (x *Event) inner() protoreflect.Message {
	if x == nil {
		return nil
	}
	m := x.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind"))
	if fd == nil {
		return nil
	}
	return m.Get(fd).Message()
}

// Describe prints the event's fields as "name=value", deterministically (pod
// specs shortened, times in RFC 3339 or, with base set, relative to it).
func (x *Event) Describe(base time.Time) string {
	inner := x.inner()
	if inner == nil {
		return ""
	}
	var parts []string
	fields := inner.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if !inner.Has(f) {
			continue
		}
		v := inner.Get(f)
		name := string(f.Name())
		switch {
		case name == "pod_json":
			parts = append(parts, fmt.Sprintf("pod_json=<%d bytes>", len(v.Bytes())))
		case name == "spec_digest":
		case strings.HasSuffix(name, "_unix_nano"):
			t := time.Unix(0, v.Int())
			s := t.UTC().Format(time.RFC3339Nano)
			if !base.IsZero() {
				s = "+" + t.Sub(base).String()
			}
			parts = append(parts, strings.TrimSuffix(name, "_unix_nano")+"="+s)
		case strings.HasSuffix(name, "_nanos"):
			parts = append(parts, fmt.Sprintf("%s=%s", strings.TrimSuffix(name, "_nanos"), time.Duration(v.Int())))
		case f.IsList():
			l := v.List()
			items := make([]string, 0, l.Len())
			for j := 0; j < l.Len(); j++ {
				items = append(items, fmt.Sprint(l.Get(j).Interface()))
			}
			parts = append(parts, fmt.Sprintf("%s=[%s]", name, strings.Join(items, ",")))
		case f.Kind() == protoreflect.EnumKind:
			if ev := f.Enum().Values().ByNumber(v.Enum()); ev != nil {
				parts = append(parts, name+"="+string(ev.Name()))
			} else {
				parts = append(parts, fmt.Sprintf("%s=%d", name, v.Enum()))
			}
		case f.Kind() == protoreflect.StringKind:
			parts = append(parts, fmt.Sprintf("%s=%q", name, v.String()))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", name, v.Interface()))
		}
	}
	return strings.Join(parts, " ")
}
