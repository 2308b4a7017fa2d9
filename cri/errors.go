package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Kind classifies an error by what the caller should do about it, independent of the runtime
// and of the transport. Decide retries by Kind (see Retryable), never by message text.
type Kind int

const (
	// OK is the kind of a nil error.
	OK Kind = iota
	// Internal is any failure not classified otherwise: gRPC Unknown/Internal/Aborted/
	// ResourceExhausted/DataLoss/PermissionDenied/Unauthenticated and non-gRPC errors.
	Internal
	// NotFound: the sandbox, container or image does not exist (gRPC NotFound).
	NotFound
	// Unavailable: the runtime cannot be reached (socket missing, connection refused,
	// runtime restarting; gRPC Unavailable).
	Unavailable
	// Timeout: the call's deadline passed (gRPC DeadlineExceeded, context.DeadlineExceeded).
	Timeout
	// Unimplemented: the runtime does not serve this RPC.
	Unimplemented
	// InvalidArgument: the request was rejected as malformed (gRPC InvalidArgument, OutOfRange).
	InvalidArgument
	// AlreadyExists: an object with this name exists already (gRPC AlreadyExists).
	AlreadyExists
	// FailedPrecondition: the object is in the wrong state for the call (gRPC FailedPrecondition).
	FailedPrecondition
	// Canceled: the caller's context was canceled (gRPC Canceled, context.Canceled).
	Canceled
)

var kindNames = [...]string{
	OK:                 "OK",
	Internal:           "Internal",
	NotFound:           "NotFound",
	Unavailable:        "Unavailable",
	Timeout:            "Timeout",
	Unimplemented:      "Unimplemented",
	InvalidArgument:    "InvalidArgument",
	AlreadyExists:      "AlreadyExists",
	FailedPrecondition: "FailedPrecondition",
	Canceled:           "Canceled",
}

// String returns the kind's name, e.g. "NotFound".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// kindError is the type of the sentinel errors. errors.Is(err, ErrNotFound) holds for every
// *Error of kind NotFound.
type kindError struct{ kind Kind }

func (e *kindError) Error() string { return "cri: " + e.kind.String() }

// Sentinel errors, one per Kind: errors.Is(err, ErrX) reports whether KindOf(err) is X for any
// error returned by this package.
var (
	ErrInternal           error = &kindError{Internal}
	ErrNotFound           error = &kindError{NotFound}
	ErrUnavailable        error = &kindError{Unavailable}
	ErrTimeout            error = &kindError{Timeout}
	ErrUnimplemented      error = &kindError{Unimplemented}
	ErrInvalidArgument    error = &kindError{InvalidArgument}
	ErrAlreadyExists      error = &kindError{AlreadyExists}
	ErrFailedPrecondition error = &kindError{FailedPrecondition}
	ErrCanceled           error = &kindError{Canceled}
)

// Error is the error returned by every method of this package. It names the operation (the CRI
// RPC, e.g. "StopContainer") and the object it was about (container, sandbox or image ID; a pod
// UID; the endpoint for runtime-wide calls), and carries the classified Kind.
//
// errors.Is(err, ErrNotFound) (and the other sentinels) match by Kind; a Timeout also matches
// context.DeadlineExceeded and a Canceled matches context.Canceled. Unwrap gives the underlying
// gRPC status error, so status.Code(err) still works.
type Error struct {
	Op   string
	ID   string
	Kind Kind
	Err  error
}

// Error formats as `cri <Op> "<ID>": <cause>`.
func (e *Error) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("cri %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("cri %s %q: %v", e.Op, e.ID, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of e's Kind and the context error of the same meaning.
func (e *Error) Is(target error) bool {
	if k, ok := target.(*kindError); ok {
		return k.kind == e.Kind
	}
	switch target {
	case context.DeadlineExceeded:
		return e.Kind == Timeout
	case context.Canceled:
		return e.Kind == Canceled
	}
	return false
}

// newError wraps err (nil stays nil) as an *Error for op on id, classifying it.
func newError(op, id string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, ID: id, Kind: KindOf(err), Err: err}
}

// KindOf classifies err. It looks through wrapping (fmt.Errorf("...: %w")) for, in this order,
// an *Error, a context error, a gRPC status and a network error; anything else is Internal.
// KindOf(nil) is OK.
func KindOf(err error) Kind {
	if err == nil {
		return OK
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	var ke *kindError
	if errors.As(err, &ke) {
		return ke.kind
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	}
	if s, ok := status.FromError(err); ok {
		return kindOfCode(s.Code())
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Timeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return Unavailable
	}
	return Internal
}

func kindOfCode(c codes.Code) Kind {
	switch c {
	case codes.OK:
		return OK
	case codes.NotFound:
		return NotFound
	case codes.Unavailable:
		return Unavailable
	case codes.DeadlineExceeded:
		return Timeout
	case codes.Unimplemented:
		return Unimplemented
	case codes.InvalidArgument, codes.OutOfRange:
		return InvalidArgument
	case codes.AlreadyExists:
		return AlreadyExists
	case codes.FailedPrecondition:
		return FailedPrecondition
	case codes.Canceled:
		return Canceled
	default:
		return Internal
	}
}

// Retryable reports whether the same call may succeed if repeated later: true for Unavailable,
// Timeout and Internal; false for nil and every other kind (NotFound, InvalidArgument,
// Unimplemented, AlreadyExists, FailedPrecondition, Canceled), which need a different call or
// no call at all.
func Retryable(err error) bool {
	switch KindOf(err) {
	case Unavailable, Timeout, Internal:
		return true
	default:
		return false
	}
}
