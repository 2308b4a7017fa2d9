package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestKindOf(t *testing.T) {
	grpcErr := func(c codes.Code) error { return status.Error(c, "x") }
	for _, tc := range []struct {
		name      string
		err       error
		kind      Kind
		retryable bool
	}{
		{"nil", nil, OK, false},
		{"NotFound", grpcErr(codes.NotFound), NotFound, false},
		{"Unavailable", grpcErr(codes.Unavailable), Unavailable, true},
		{"DeadlineExceeded", grpcErr(codes.DeadlineExceeded), Timeout, true},
		{"Unimplemented", grpcErr(codes.Unimplemented), Unimplemented, false},
		{"InvalidArgument", grpcErr(codes.InvalidArgument), InvalidArgument, false},
		{"OutOfRange", grpcErr(codes.OutOfRange), InvalidArgument, false},
		{"AlreadyExists", grpcErr(codes.AlreadyExists), AlreadyExists, false},
		{"FailedPrecondition", grpcErr(codes.FailedPrecondition), FailedPrecondition, false},
		{"Canceled", grpcErr(codes.Canceled), Canceled, false},
		{"Internal", grpcErr(codes.Internal), Internal, true},
		{"Unknown", grpcErr(codes.Unknown), Internal, true},
		{"ResourceExhausted", grpcErr(codes.ResourceExhausted), Internal, true},
		{"wrapped status", fmt.Errorf("pod %q: %w", "u1", grpcErr(codes.NotFound)), NotFound, false},
		{"context deadline", context.DeadlineExceeded, Timeout, true},
		{"wrapped context deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), Timeout, true},
		{"context canceled", context.Canceled, Canceled, false},
		{"*Error", &Error{Op: "StopContainer", ID: "c1", Kind: FailedPrecondition, Err: errors.New("x")}, FailedPrecondition, false},
		{"wrapped *Error", fmt.Errorf("pod u1: %w", newError("StartContainer", "c1", grpcErr(codes.AlreadyExists))), AlreadyExists, false},
		{"sentinel", fmt.Errorf("x: %w", ErrUnimplemented), Unimplemented, false},
		{"connection refused", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}, Unavailable, true},
		{"plain error", errors.New("boom"), Internal, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.kind {
				t.Errorf("KindOf = %v, want %v", got, tc.kind)
			}
			if got := Retryable(tc.err); got != tc.retryable {
				t.Errorf("Retryable = %v, want %v", got, tc.retryable)
			}
		})
	}
}

func TestErrorSentinelsAndFormat(t *testing.T) {
	sentinels := map[Kind]error{
		Internal: ErrInternal, NotFound: ErrNotFound, Unavailable: ErrUnavailable, Timeout: ErrTimeout,
		Unimplemented: ErrUnimplemented, InvalidArgument: ErrInvalidArgument, AlreadyExists: ErrAlreadyExists,
		FailedPrecondition: ErrFailedPrecondition, Canceled: ErrCanceled,
	}
	for kind, sentinel := range sentinels {
		err := fmt.Errorf("pod u1: %w", &Error{Op: "Op", ID: "id", Kind: kind, Err: errors.New("cause")})
		for other, s := range sentinels {
			if got := errors.Is(err, s); got != (other == kind) {
				t.Errorf("errors.Is(%v error, %v) = %v", kind, s, got)
			}
		}
		if KindOf(sentinel) != kind {
			t.Errorf("KindOf(%v) = %v", sentinel, KindOf(sentinel))
		}
	}

	cause := status.Error(codes.NotFound, "no such container")
	err := newError("RemoveContainer", "abc", cause)
	if got, want := err.Error(), `cri RemoveContainer "abc": rpc error: code = NotFound desc = no such container`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) || status.Code(err) != codes.NotFound {
		t.Errorf("cause not reachable through Unwrap: %v", err)
	}
	if got := (&Error{Op: "Version", Err: errors.New("x")}).Error(); got != "cri Version: x" {
		t.Errorf("Error() without ID = %q", got)
	}
	if newError("Op", "id", nil) != nil {
		t.Error("newError(nil) is not nil")
	}
	if Kind(99).String() != "Kind(99)" || NotFound.String() != "NotFound" {
		t.Error("Kind.String")
	}
}
