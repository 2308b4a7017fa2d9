package sim

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/actorlet/actorlet/cri/serve"
)

// Kind is the class of an error returned by the simulated runtime. Every
// error the Runtime's RPC methods return (other than context errors) wraps
// exactly one Kind, so Go callers classify with errors.Is(err, sim.ErrNotFound)
// and gRPC callers with status.Code(err): each Kind carries its gRPC code.
type Kind struct {
	code codes.Code
	name string
}

// Error implements error.
func (k *Kind) Error() string { return k.name }

// Code is the gRPC status code clients see for errors of this kind.
func (k *Kind) Code() codes.Code { return k.code }

// Error kinds. The gRPC code is in parentheses.
var (
	// ErrNotFound: the sandbox, container or image does not exist (NotFound).
	ErrNotFound = &Kind{codes.NotFound, "not found"}
	// ErrInvalidArgument: the request is malformed, e.g. missing metadata,
	// an unparsable SIM_* variable or image reference (InvalidArgument).
	ErrInvalidArgument = &Kind{codes.InvalidArgument, "invalid argument"}
	// ErrFailedPrecondition: the object is in the wrong state for the call,
	// e.g. starting a container that is not CREATED or creating a container
	// in a sandbox that is not READY (FailedPrecondition).
	ErrFailedPrecondition = &Kind{codes.FailedPrecondition, "failed precondition"}
	// ErrAlreadyExists: the sandbox or container name (metadata incl.
	// attempt) is reserved by an object that still exists (AlreadyExists).
	ErrAlreadyExists = &Kind{codes.AlreadyExists, "already exists"}
	// ErrExhausted: the pod CIDR has no free address (ResourceExhausted).
	ErrExhausted = &Kind{codes.ResourceExhausted, "resource exhausted"}
	// ErrScripted: a failure the pod asked for (AnnotationRunPodSandboxError)
	// (Unknown, as containerd reports a failed CNI setup).
	ErrScripted = &Kind{codes.Unknown, "scripted failure"}
	// ErrClosed: the Runtime was closed (Unavailable).
	ErrClosed = &Kind{codes.Unavailable, "runtime closed"}
)

// Errors of Serve and InProcess (not RPC errors), shared with cri/serve.
var (
	// ErrUnsupportedEndpoint: the listen address is neither unix:// nor a
	// loopback tcp:// address.
	ErrUnsupportedEndpoint = serve.ErrUnsupportedEndpoint
	// ErrSocketInUse: another server is accepting connections on the socket.
	ErrSocketInUse = serve.ErrSocketInUse
)

// rpcError is a Kind with a message naming the object. It satisfies
// errors.Is against its Kind and converts to a gRPC status with the
// Kind's code (grpc-go looks for the GRPCStatus method).
type rpcError struct {
	kind *Kind
	msg  string
}

func (e *rpcError) Error() string              { return e.msg }
func (e *rpcError) Unwrap() error              { return e.kind }
func (e *rpcError) GRPCStatus() *status.Status { return status.New(e.kind.code, e.msg) }

func newErr(kind *Kind, format string, args ...any) error {
	return &rpcError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
