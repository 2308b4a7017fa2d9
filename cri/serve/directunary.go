package serve

import (
	"context"
	"reflect"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// directUnary serves a Direct connection's unary calls in the caller's
// goroutine: the handler is a function call, where grpchan's inprocgrpc
// channel starts a goroutine for each call and has the caller wait for it
// (two goroutines per call in flight; the runtime never frees a
// goroutine's descriptor, so a burst of a thousand pods' CRI calls left the
// process about half a megabyte larger for good, and each call paid a
// goroutine's start and a channel's hand-off).
//
// What holds as over the channel: the handler gets a copy of the request
// and the caller a copy of the reply (copyMessage; with OwnReplies the
// reply itself, handed over); the interceptors run
// around it, the first outermost; the handler's context has the caller's
// deadline and cancellation, the caller's outgoing metadata as incoming,
// an in-process peer and none of the caller's other values; a caller whose
// context ends gets Canceled or DeadlineExceeded; the client stats handler
// sees the call begin, its payloads and its end. What differs: the caller
// returns when the handler does, so a handler must end its waits when its
// context ends, as the simulated runtime's and the fault injector's do.
type directUnary struct {
	methods   map[string]directMethod // by full method name, "/service/method"
	intercept grpc.UnaryServerInterceptor
	stats     stats.Handler
	// ownReplies: replies are handed over, not copied (DirectOptions.OwnReplies).
	ownReplies bool
}

// directMethod is one unary method and the server it calls.
type directMethod struct {
	srv     any
	handler grpc.MethodHandler
}

func newDirectUnary(interceptors []grpc.UnaryServerInterceptor, st stats.Handler, ownReplies bool) *directUnary {
	return &directUnary{methods: map[string]directMethod{}, intercept: chainUnary(interceptors), stats: st, ownReplies: ownReplies}
}

// register adds the unary methods of a service.
func (u *directUnary) register(sd *grpc.ServiceDesc, srv any) {
	for _, m := range sd.Methods {
		u.methods["/"+sd.ServiceName+"/"+m.MethodName] = directMethod{srv: srv, handler: m.Handler}
	}
}

// invoke calls method with a copy of req and copies its answer into reply
// (or, with ownReplies, hands it over).
func (u *directUnary) invoke(ctx context.Context, method string, req, reply any) (err error) {
	m, ok := u.methods[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "in-process CRI: method %s not implemented", method)
	}
	if u.stats != nil {
		ctx = u.stats.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method})
		u.stats.HandleRPC(ctx, &stats.Begin{Client: true, BeginTime: time.Now()})
		u.stats.HandleRPC(ctx, &stats.OutPayload{Payload: req, SentTime: time.Now()})
		defer func() { u.stats.HandleRPC(ctx, &stats.End{Client: true, EndTime: time.Now(), Error: err}) }()
	}
	v, err := m.handler(m.srv, serverContext(ctx), func(in any) error { return copyMessage(in, req) }, u.intercept)
	if cerr := ctx.Err(); cerr != nil {
		// The caller's end, whatever the handler made of it: a remote
		// call's caller would have returned with it.
		return status.FromContextError(cerr).Err()
	}
	if err != nil {
		return err
	}
	if v == nil || (reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil()) {
		return status.Errorf(codes.Internal, "in-process CRI: %s returned neither an error nor a reply", method)
	}
	fill := copyMessage
	if u.ownReplies {
		fill = handOver
	}
	if err := fill(reply, v); err != nil {
		return err
	}
	if u.stats != nil {
		u.stats.HandleRPC(ctx, &stats.InPayload{Payload: v, RecvTime: time.Now()})
	}
	return nil
}

// chainUnary is the interceptors as one, the first outermost; nil for none.
func chainUnary(is []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return is[0](ctx, req, info, chainedHandler(is[1:], info, h))
	}
}

// chainedHandler is h behind the interceptors is.
func chainedHandler(is []grpc.UnaryServerInterceptor, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) grpc.UnaryHandler {
	if len(is) == 0 {
		return h
	}
	return func(ctx context.Context, req any) (any, error) {
		return is[0](ctx, req, info, chainedHandler(is[1:], info, h))
	}
}

// directPeer is the peer a handler of a Direct connection sees.
var directPeer = &peer.Peer{Addr: directAddr{}}

// directAddr is the address of a Direct connection's caller.
type directAddr struct{}

func (directAddr) Network() string { return "inproc" }
func (directAddr) String() string  { return "inproc:0" }

// serverContext is the context a handler gets for a call made on ctx: its
// deadline and cancellation, its outgoing metadata as incoming, the
// in-process peer, and none of its other values.
func serverContext(ctx context.Context) context.Context {
	sc := context.Context(noValues{ctx})
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		sc = metadata.NewIncomingContext(sc, md)
	}
	return peer.NewContext(sc, directPeer)
}

// noValues is a context without its parent's values, but for the key under
// which a context.WithCancel context answers itself (found with
// cancelProbe): a context the handler derives from it joins the caller's
// cancellation as a child, without a goroutine watching it, which a
// context hiding that key too would cost.
type noValues struct{ context.Context }

// Value implements context.Context.
func (c noValues) Value(key any) any {
	if cancelProbe.Value(key) == cancelProbe {
		return c.Context.Value(key)
	}
	return nil
}

// cancelProbe answers itself for the context package's own key only.
var cancelProbe = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
