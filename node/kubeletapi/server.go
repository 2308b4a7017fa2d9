package kubeletapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.uber.org/zap"
)

// Server is the kubelet API server. Its methods are safe for concurrent
// use. A Server is started at most once; see the package documentation for
// its lifecycle.
type Server struct {
	opts    Options
	log     *zap.Logger
	srv     *http.Server
	auth    *auth
	streams *streamSet

	// base is the parent of every request's context; cancelBase ends
	// followed logs when the server stops. handlers counts the handlers
	// running, hijacked or not.
	base       context.Context
	cancelBase context.CancelFunc
	handlers   *inflight

	mu      sync.Mutex
	started bool // Start succeeded
	closed  bool // Shutdown was called
	addr    string

	// stopOnce closes stop, after setting stopCtx to the first Shutdown's
	// context, for the stopper goroutine.
	stopOnce sync.Once
	stop     chan struct{}
	stopCtx  context.Context
	// done is closed when the server's goroutines have ended; stopErr is
	// then the result of the graceful shutdown.
	done    chan struct{}
	stopErr error
}

// New checks opts, reads the certificate files (or makes a self-signed
// serving certificate) and returns a Server that is not listening yet.
// Errors about the options or files are ErrInvalidOptions.
func New(opts Options) (*Server, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(&opts)
	if err != nil {
		return nil, err
	}
	a, err := newAuth(&opts)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger.Named("kubeletapi"),
		streams:  newStreamSet(),
		handlers: newInflight(),
		auth:     a,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           s.track(s.authFilter(s.routes())),
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          zap.NewStdLog(s.log),
		BaseContext:       func(net.Listener) context.Context { return s.base },
	}
	return s, nil
}

// track counts the handlers running, so that Shutdown can wait for them.
// Once the server has stopped, a request still read from a closing
// connection is 503.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.handlers.enter() {
			http.Error(w, "Service Unavailable: shutting down", http.StatusServiceUnavailable)
			return
		}
		defer s.handlers.leave()
		h.ServeHTTP(w, r)
	})
}

// Start binds the address and serves TLS in the background until ctx is
// done or Shutdown is called. A bind failure is returned here as
// ErrListen, naming the address. Start fails with ErrAlreadyStarted on a
// second call and with ErrClosed after Shutdown.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.started:
		return ErrAlreadyStarted
	}
	addr := net.JoinHostPort(s.opts.Address, strconv.Itoa(s.opts.Port))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%w on %s: %w", ErrListen, addr, err)
	}
	s.started = true
	s.addr = ln.Addr().String()
	s.auth.run(s.base)
	s.log.Info("serving the kubelet API", zap.String("address", s.addr), zap.String("node", s.opts.NodeName))

	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := s.srv.Serve(tls.NewListener(ln, s.srv.TLSConfig)); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving stopped", zap.String("address", s.addr), zap.Error(err))
		}
	}()
	go s.stopper(ctx, served)
	return nil
}

// stopper is the only caller of srv.Shutdown: on ctx done with StopGrace,
// on a Shutdown call with its context. Requests and upgraded streams in
// flight get until the grace runs out; then followed logs are ended,
// connections and streams closed, and the handlers waited for.
func (s *Server) stopper(ctx context.Context, served <-chan struct{}) {
	defer close(s.done)
	var grace context.Context
	select {
	case <-s.stop:
		grace = s.stopCtx
	case <-ctx.Done():
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopGrace)
		defer cancel()
		grace = c
	}
	err := s.srv.Shutdown(grace)
	if err != nil {
		s.cancelBase()
		_ = s.srv.Close()
	}
	if !s.streams.wait(grace) && err == nil {
		err = grace.Err()
	}
	s.streams.closeAll()
	s.cancelBase()
	s.handlers.stopAndWait()
	<-served
	s.stopErr = err
	s.log.Info("stopped", zap.String("address", s.addr))
}

// Addr returns the bound address as host:port; empty before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Shutdown stops the server: the listener closes at once, requests and
// streams in flight may finish until ctx is done, then they are cut. It
// returns once the server's goroutines and handlers have ended, with
// ctx.Err() if the grace ran out. Shutdown before Start only prevents a
// later Start; calling it again is harmless.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	s.closed = true
	s.mu.Unlock()
	if !started {
		s.cancelBase()
		return nil
	}

	s.stopOnce.Do(func() {
		s.stopCtx = ctx
		close(s.stop)
	})
	select {
	case <-s.done:
		return s.stopErr
	case <-ctx.Done():
		// The stopper may be waiting with another grace (Start's context, or
		// an earlier Shutdown's); ours ran out.
		s.cancelBase()
		_ = s.srv.Close()
		s.streams.closeAll()
		<-s.done
		return ctx.Err()
	}
}
