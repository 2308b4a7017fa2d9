package sim

import (
	"maps"

	"google.golang.org/protobuf/proto"
)

// cloneMsg deep-copies a generated message; nil stays nil.
func cloneMsg[T interface {
	proto.Message
	comparable
}](m T) T {
	var zero T
	if m == zero {
		return zero
	}
	return proto.Clone(m).(T)
}

// cloneMsgs deep-copies a slice of messages.
func cloneMsgs[T interface {
	proto.Message
	comparable
}](ms []T) []T {
	if ms == nil {
		return nil
	}
	out := make([]T, len(ms))
	for i, m := range ms {
		out[i] = cloneMsg(m)
	}
	return out
}

// cloneMap copies a string map, keeping nil as nil.
func cloneMap(m map[string]string) map[string]string { return maps.Clone(m) }
