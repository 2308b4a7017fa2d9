// Package proxy is a CRI v1 proxy: it forwards every call of the
// RuntimeService and the ImageService (unary calls, the GetContainerEvents
// stream, and Exec/Attach/PortForward, whose reply is the upstream's
// streaming URL) to an upstream runtime, with a fault plan injected
// (package cri/faults). It is `actorlet cri-proxy`.
package proxy

import (
	"context"
	"errors"
	"io"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/cri/serve"
)

// Services the proxy forwards, by the prefix of their methods.
const (
	runtimeService = "/runtime.v1.RuntimeService/"
	imageService   = "/runtime.v1.ImageService/"
)

// Upstream is where calls go: a connection for the RuntimeService and one
// for the ImageService (often the same).
type Upstream struct {
	Runtime, Image grpc.ClientConnInterface
}

// Proxy forwards CRI calls to its Upstream.
//
// Guarantees: messages, metadata (headers and trailers) and status errors
// pass unchanged, byte for byte; a call's cancellation or deadline reaches
// the upstream; calls of other services are refused with Unimplemented
// (the proxy never exposes the upstream's other APIs, e.g. containerd's).
type Proxy struct {
	up  Upstream
	log *zap.Logger
}

// New returns a Proxy to up; log may be nil.
func New(up Upstream, log *zap.Logger) *Proxy {
	if log == nil {
		log = zap.NewNop()
	}
	return &Proxy{up: up, log: log}
}

// NewServer returns a server that forwards every call through p, with inj's
// faults injected (inj may be nil: no faults). Start or Run it.
func NewServer(p *Proxy, inj *faults.Injector) *serve.Server {
	var stream []grpc.StreamServerInterceptor
	if inj != nil {
		stream = append(stream, inj.StreamServerInterceptor())
	}
	return serve.NewServer(nil, stream, grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodecV2(rawCodec{}))
}

// forward carries one call, of any shape, to the upstream and back.
func (p *Proxy) forward(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	var conn grpc.ClientConnInterface
	switch {
	case strings.HasPrefix(method, runtimeService):
		conn = p.up.Runtime
	case strings.HasPrefix(method, imageService):
		conn = p.up.Image
	default:
		return status.Errorf(codes.Unimplemented, "cri-proxy: %s is not a CRI v1 method", method)
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	}
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return err
	}
	// Ends when the client half-closes (at once, for CRI's calls) or the
	// call ends.
	go requests(ss, cs)

	// The header first: a GetContainerEvents client waits for it to know it
	// is subscribed, long before the first event.
	if md, err := cs.Header(); err == nil && md != nil {
		if err := ss.SendHeader(md); err != nil {
			return err
		}
	}
	for {
		f := &frame{}
		if err := cs.RecvMsg(f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err // the upstream's status, as it is
		}
		if err := ss.SendMsg(f); err != nil {
			p.log.Debug("cri-proxy: client went away", zap.String("method", method), zap.Error(err))
			return err
		}
	}
}

// requests passes the client's messages to the upstream until the client
// half-closes. A failure on either side ends the call as a whole (the
// client's context, or the upstream's status), which forward reports.
func requests(ss grpc.ServerStream, cs grpc.ClientStream) {
	for {
		f := &frame{}
		if err := ss.RecvMsg(f); err != nil {
			if errors.Is(err, io.EOF) {
				_ = cs.CloseSend()
			}
			return
		}
		if err := cs.SendMsg(f); err != nil {
			return
		}
	}
}
