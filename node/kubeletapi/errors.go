package kubeletapi

import "errors"

// Error kinds, for errors.Is.
var (
	// ErrInvalidOptions: New was given options it cannot use, including
	// certificate or CA files it cannot read.
	ErrInvalidOptions = errors.New("kubeletapi: invalid options")
	// ErrListen: Start could not bind its address. The error names the
	// address and also wraps the cause.
	ErrListen = errors.New("kubeletapi: cannot listen")
	// ErrAlreadyStarted: Start was called a second time.
	ErrAlreadyStarted = errors.New("kubeletapi: already started")
	// ErrClosed: Start was called after Shutdown.
	ErrClosed = errors.New("kubeletapi: shut down")

	// ErrNotFound is for the data providers (LogLocator, ContainerResolver):
	// an error that wraps it means the pod, container or log does not
	// exist, and the request is answered 404 with the error's text. Any
	// other provider error is a 500.
	ErrNotFound = errors.New("not found")
)
