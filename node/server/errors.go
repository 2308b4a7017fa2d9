package server

import "errors"

// Error kinds, for errors.Is.
var (
	// ErrInvalidOptions: New was given options it cannot use.
	ErrInvalidOptions = errors.New("server: invalid options")
	// ErrListen: Start could not bind its address. The error names the
	// address and also wraps the cause (errors.Is(err, syscall.EADDRINUSE)
	// for an address in use).
	ErrListen = errors.New("server: cannot listen")
	// ErrAlreadyStarted: Start was called a second time.
	ErrAlreadyStarted = errors.New("server: already started")
	// ErrClosed: Start was called after Shutdown.
	ErrClosed = errors.New("server: shut down")
)
