package lifecycle_test

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// formatEvent prints an event as "Kind field=value ...", deterministic,
// with times relative to t0 and pod specs shortened.
func formatEvent(env *pb.Envelope, t0 time.Time) string {
	m := env.GetEvent().ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("kind")
	fd := m.WhichOneof(od)
	if fd == nil {
		return fmt.Sprintf("seq=%d <empty>", env.GetSeq())
	}
	inner := m.Get(fd).Message()
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", env.GetSeq(), inner.Descriptor().Name())
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
			fmt.Fprintf(&b, " pod_json=<%d bytes>", len(v.Bytes()))
		case name == "spec_digest":
		case strings.HasSuffix(name, "_unix_nano"):
			fmt.Fprintf(&b, " %s=%s", strings.TrimSuffix(name, "_unix_nano"), rel(v.Int(), t0))
		case strings.HasSuffix(name, "_nanos"):
			fmt.Fprintf(&b, " %s=%s", strings.TrimSuffix(name, "_nanos"), time.Duration(v.Int()))
		case f.Kind() == protoreflect.StringKind:
			fmt.Fprintf(&b, " %s=%q", name, v.String())
		default:
			fmt.Fprintf(&b, " %s=%v", name, v.Interface())
		}
	}
	return b.String()
}

func rel(ns int64, t0 time.Time) string {
	return "+" + time.Unix(0, ns).Sub(t0).String()
}
