package proxy

import (
	"fmt"

	"google.golang.org/grpc/mem"
)

// frame is one message, as it was on the wire: the proxy forwards what it
// does not need to read without decoding it, so that it passes on fields
// (and RPCs) newer than the CRI version it was built with.
type frame struct{ b []byte }

// rawCodec moves frames. It is named "proto" so that the content type on
// both legs stays application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("cri-proxy codec: cannot marshal %T", v)
	}
	// A SliceBuffer holds no pooled memory: a frame may be sent twice (a
	// duplicated event).
	return mem.BufferSlice{mem.SliceBuffer(f.b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("cri-proxy codec: cannot unmarshal into %T", v)
	}
	f.b = data.Materialize()
	return nil
}
