package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.uber.org/zap"
)

// Server is the local HTTP server. Its methods are safe for concurrent use.
// A Server is started at most once; see the package documentation for its
// lifecycle.
type Server struct {
	opts Options
	log  *zap.Logger
	srv  *http.Server

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

// New checks opts, applies the defaults and returns a Server that is not
// listening yet. Errors are ErrInvalidOptions.
func New(opts Options) (*Server, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts,
		log:  opts.Logger.Named("server"),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	s.srv = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          zap.NewStdLog(s.log),
	}
	return s, nil
}

// Start binds the address and serves in the background until ctx is done or
// Shutdown is called. A bind failure is returned here as ErrListen, naming
// the address. Start fails with ErrAlreadyStarted on a second call and with
// ErrClosed after Shutdown.
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
	s.log.Info("serving", zap.String("address", s.addr), zap.Strings("paths", s.endpoints()))

	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving stopped", zap.String("address", s.addr), zap.Error(err))
		}
	}()
	go s.stopper(ctx, served)
	return nil
}

// stopper is the only caller of srv.Shutdown: on ctx done with StopGrace,
// on a Shutdown call with its context. If the grace runs out, the remaining
// connections are closed.
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
		_ = s.srv.Close()
	}
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

// Shutdown stops the server: the listener closes at once, requests in flight
// may finish until ctx is done, then their connections are closed. It
// returns once the server's goroutines have ended, with ctx.Err() if the
// grace ran out. Shutdown before Start only prevents a later Start; calling
// it again is harmless.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	s.closed = true
	s.mu.Unlock()
	if !started {
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
		_ = s.srv.Close()
		<-s.done
		return ctx.Err()
	}
}
