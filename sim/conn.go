package sim

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/faults"
)

// directConn is a grpc.ClientConnInterface that calls a node's simulated
// runtime's service methods directly, in the caller's goroutine, with the
// node's fault plan applied on virtual time: the real cri.Client runs over
// it, without sockets, goroutines or wall-clock waits.
//
// Faults are decided by the fault plan's pure functions (faults.DecideCall,
// DecideRestart) from the node's seed and call counters, as the runtime's
// own Injector decides them; what takes time (latency, a hang until the
// caller's timeout) is added to the node's pending delay, which the shell
// waits in virtual time before it hears the reply.
type directConn struct {
	n        *Node
	srv      any
	handlers map[string]grpc.MethodDesc
}

func newDirectConn(n *Node, srv any) *directConn {
	c := &directConn{n: n, srv: srv, handlers: map[string]grpc.MethodDesc{}}
	for _, sd := range []*grpc.ServiceDesc{&runtimeapi.RuntimeService_ServiceDesc, &runtimeapi.ImageService_ServiceDesc} {
		for _, m := range sd.Methods {
			c.handlers["/"+sd.ServiceName+"/"+m.MethodName] = m
		}
	}
	return c
}

// Invoke implements grpc.ClientConnInterface.
func (c *directConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	m, ok := c.handlers[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "sim: method %s not served", method)
	}
	short := method[strings.LastIndexByte(method, '/')+1:]
	call := func() (any, error) {
		return m.Handler(c.srv, ctx, func(v any) error {
			shallowCopy(v, args)
			return nil
		}, nil)
	}
	resp, err := c.n.intercept(short, args, call)
	if err != nil {
		return err
	}
	shallowCopy(reply, resp)
	return nil
}

// shallowCopy sets *dst to *src (two pointers to the same message type):
// the fields are shared, not copied. The runtime neither keeps nor changes
// requests, and its responses are fresh copies (crisim.Runtime's
// guarantees), so sharing is safe, and it spares two deep copies per call.
func shallowCopy(dst, src any) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// NewStream implements grpc.ClientConnInterface: no streams here (events
// are taken with crisim.Runtime.Subscribe).
func (c *directConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "sim: streams are not served in the simulation")
}

// rpcCost is the virtual time every RPC takes at least.
const rpcCost = 200 * time.Microsecond

// intercept applies the node's faults to one call of method.
func (n *Node) intercept(method string, args any, call func() (any, error)) (any, error) {
	n.delay += rpcCost
	n.stats.calls++
	if !n.faultsOn() || n.plan == nil {
		resp, err := call()
		n.observeCall(method, args, resp, err, faults.Pass)
		return resp, err
	}
	g := n.callsTotal
	n.callsTotal++
	k := n.callsBy[method]
	n.callsBy[method] = k + 1
	if faults.DecideRestart(n.plan.Restart, n.faultSeed, g) {
		mode := n.plan.Restart.Mode
		if mode == "" {
			mode = faults.RestartKeep
		}
		n.rt.Restart(mode)
		n.downUntil = n.clock.Now().Add(time.Duration(n.plan.Restart.Downtime))
		n.countFault(string(faults.KindRestart) + "/" + string(mode))
	}
	fc := faults.DecideCall(n.plan, n.faultSeed, method, k)
	if fc.Delay > 0 {
		n.delay += fc.Delay
		n.countFault(string(faults.KindLatency))
	}
	if n.clock.Now().Before(n.downUntil) {
		n.countFault(string(faults.KindDown))
		return nil, status.Errorf(codes.Unavailable, "sim: %s refused: the runtime is restarting (injected fault)", method)
	}
	timeout := n.s.opts.RuntimeTimeout
	switch fc.Action {
	case faults.FailBefore:
		n.countFault(string(faults.KindError))
		return nil, status.Errorf(fc.Code, "sim: %s failed (injected fault, before the call)", method)
	case faults.HangBefore:
		n.countFault(string(faults.KindHang))
		n.delay += timeout
		return nil, status.Errorf(codes.DeadlineExceeded, "sim: %s hung until the deadline (injected fault)", method)
	case faults.FailAfter:
		resp, err := call()
		n.observeCall(method, args, resp, err, fc.Action)
		n.countFault(string(faults.KindErrorAfter))
		return nil, status.Errorf(fc.Code, "sim: %s reply lost (injected fault, after the call)", method)
	case faults.HangAfter:
		resp, err := call()
		n.observeCall(method, args, resp, err, fc.Action)
		n.countFault(string(faults.KindHangAfter))
		n.delay += timeout
		return nil, status.Errorf(codes.DeadlineExceeded, "sim: %s reply withheld until the deadline (injected fault)", method)
	}
	resp, err := call()
	n.observeCall(method, args, resp, err, faults.Pass)
	return resp, err
}

// errString is err's message, or "".
func errString(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprint(err)
}
