package serve

import (
	"context"
	"reflect"

	"github.com/fullstorydev/grpchan"
	"github.com/fullstorydev/grpchan/inprocgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DirectOptions are the parts of a Direct connection besides its runtime;
// the zero value is a plain connection.
type DirectOptions struct {
	// Unary and Stream run around each call as a server's interceptors
	// would, the first outermost (a fault plan's injector, for one).
	Unary  []grpc.UnaryServerInterceptor
	Stream []grpc.StreamServerInterceptor
	// ClientStats sees each call as a gRPC client's stats handler does
	// (cri.TracingStatsHandler traces them); nil: none.
	ClientStats stats.Handler
	// OwnReplies promises that every unary reply of the runtime (and of the
	// interceptors, which then pass it on or return none) is a message made
	// for that call, which the runtime keeps nothing of: no message, list,
	// map or bytes of it is held or changed by anything else once it is
	// returned. The caller then takes each reply over instead of copying it
	// (the runtime's listings were most of what a fleet's nodes copied).
	// Requests are copied either way.
	OwnReplies bool
}

// Direct returns a connection to rt, a runtime in the same process, for
// cri.NewFromConn, on which a call is a function call: no bytes, no
// HTTP/2 framing, no connection buffers (grpchan's inprocgrpc channel).
// It is what InProcess is without the transport, and much cheaper per
// call; InProcess remains for what needs a real gRPC connection (dial
// options, a server's own options).
//
// What holds, as over a socket: requests and replies are copies (merged
// into fresh messages by proto.Merge, which copies every message, list,
// map and bytes field and shares only the immutable strings), or with
// OwnReplies, replies made for the call and handed over, so client and
// runtime share no message; each call sees the caller's deadline,
// cancellation and outgoing metadata (not its other context values);
// errors keep their gRPC status; streams (GetContainerEvents) are served.
// A unary call runs in the caller's goroutine (directUnary), so its handler
// must end its waits when its context ends; a stream runs in a goroutine
// of its own.
//
// stop cancels every call and stream in flight, and calls made after it
// fail with Unavailable; it is idempotent. rt stays usable.
func Direct(rt Runtime, o DirectOptions) (conn grpc.ClientConnInterface, stop func()) {
	ch := new(inprocgrpc.Channel).WithCloner(streamCloner{})
	if o.ClientStats != nil {
		ch.WithClientStatsHandler(o.ClientStats)
	}
	l := newLife(errDirectStopped)
	reg := grpchan.WithStreamInterceptors(ch, append([]grpc.StreamServerInterceptor{l.stream, sendEmptyHeaders}, o.Stream...)...)
	runtimeapi.RegisterRuntimeServiceServer(reg, rt) // for the streams
	runtimeapi.RegisterImageServiceServer(reg, rt)
	u := newDirectUnary(o.Unary, o.ClientStats, o.OwnReplies)
	u.register(&runtimeapi.RuntimeService_ServiceDesc, rt)
	u.register(&runtimeapi.ImageService_ServiceDesc, rt)
	return &directConn{Channel: ch, life: l, unary: u}, l.end
}

// directConn binds a unary call to the connection's life on the caller's
// side, before the channel: the caller's context is a context package's
// own, which a child joins without a goroutine. Bound on the server's
// side, as a stream is, the child's parent would be the channel's server
// context, which hides its values and so the cancellation it derives from:
// context.WithCancel then starts a goroutine to watch it, one more for
// every call in flight (and the runtime never frees a goroutine's
// descriptor, so a burst of calls leaves the process larger for good).
type directConn struct {
	*inprocgrpc.Channel // the streams
	life                *life
	unary               *directUnary
}

// Invoke implements grpc.ClientConnInterface.
func (c *directConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	ctx, done, err := c.life.bind(ctx)
	if err != nil {
		return err
	}
	defer done()
	return c.unary.invoke(ctx, method, req, reply)
}

// copyMessage sets out to a deep copy of in, two messages of one type
// (generated CRI messages: the proto package's own Merge, without the
// dynamic-message support of grpchan's default cloner).
func copyMessage(out, in any) error {
	o, i, err := messages(out, in)
	if err != nil {
		return err
	}
	if o.ProtoReflect().Descriptor() != i.ProtoReflect().Descriptor() {
		return status.Errorf(codes.Internal, "in-process CRI: cannot copy a %T into a %T", in, out)
	}
	proto.Reset(o)
	proto.Merge(o, i)
	return nil
}

// streamCloner copies a stream's message once, where a Cloner made with
// inprocgrpc.CopyFunc copies it twice: Clone, at the send, deep-copies the
// message (copyMessage), so the sender keeps its own as over a socket;
// Copy, at the receive, hands that clone over to the receiver's message (a
// shallow copy of the struct, which then holds the clone's fields) instead
// of copying it again. The hand-over is sound because nothing else holds a
// clone: the channel carries streams only (directConn serves the unary
// calls itself, with copyMessage), and each message it carries is a Clone
// of its send, received once. A runtime's events were most of what
// crossed twice: a sandbox status and its containers' statuses each.
type streamCloner struct{}

// Clone implements inprocgrpc.Cloner.
func (streamCloner) Clone(in any) (any, error) {
	i, ok := in.(proto.Message)
	if !ok {
		return nil, status.Errorf(codes.Internal, "in-process CRI: %T is not a protobuf message", in)
	}
	out := i.ProtoReflect().New().Interface()
	proto.Merge(out, i)
	return out, nil
}

// Copy implements inprocgrpc.Cloner: in is a Clone, which out takes over.
func (streamCloner) Copy(out, in any) error { return handOver(out, in) }

// handOver sets out, a message of in's type, to in's fields, without
// copying them: out then holds what in held. Sound only when nothing else
// holds in or anything in it.
func handOver(out, in any) error {
	o, i, err := messages(out, in)
	if err != nil {
		return err
	}
	ov, iv := reflect.ValueOf(o), reflect.ValueOf(i)
	if ov.Type() != iv.Type() || ov.Kind() != reflect.Pointer || ov.IsNil() || iv.IsNil() {
		return status.Errorf(codes.Internal, "in-process CRI: cannot copy a %T into a %T", in, out)
	}
	ov.Elem().Set(iv.Elem())
	return nil
}

// messages is out and in as protobuf messages, or an error naming the one
// that is not.
func messages(out, in any) (o, i proto.Message, err error) {
	o, ok := out.(proto.Message)
	if !ok {
		return nil, nil, status.Errorf(codes.Internal, "in-process CRI: %T is not a protobuf message", out)
	}
	if i, ok = in.(proto.Message); !ok {
		return nil, nil, status.Errorf(codes.Internal, "in-process CRI: %T is not a protobuf message", in)
	}
	return o, i, nil
}

// errDirectStopped answers calls made after a Direct connection's stop.
var errDirectStopped = status.Error(codes.Unavailable, "in-process CRI connection is closed")

// sendEmptyHeaders gives a stream's handler a headerStream.
func sendEmptyHeaders(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, headerStream{ss})
}

// headerStream sends the headers a server sends, even empty ones: over
// HTTP/2 a header frame always goes (with content-type, which a gRPC
// client's Header() shows), and a client's Header() returns when it
// arrives (a runtime's "subscribed"), but inprocgrpc sends no frame for
// empty metadata, so Header() would wait for the first message.
type headerStream struct{ grpc.ServerStream }

// SendHeader implements grpc.ServerStream.
func (s headerStream) SendHeader(md metadata.MD) error {
	return s.ServerStream.SendHeader(metadata.Join(metadata.Pairs("content-type", "application/grpc"), md))
}
