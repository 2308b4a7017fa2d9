package staticpod

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error kinds of a rejected manifest, for errors.Is.
var (
	// ErrUnreadable: the file could not be read.
	ErrUnreadable = errors.New("unreadable manifest")
	// ErrDecode: the file is empty, not YAML/JSON, holds more than one
	// document, or a value of the wrong type. (Unknown fields are a
	// Warning, not an error.)
	ErrDecode = errors.New("cannot decode manifest")
	// ErrNotPod: the file holds an object other than a v1 Pod.
	ErrNotPod = errors.New("manifest is not a v1 Pod")
	// ErrInvalid: the pod failed validation; see ManifestError.Fields.
	ErrInvalid = errors.New("invalid pod")
	// ErrTooLarge: the file is larger than MaxManifestBytes, or the pod's
	// annotations larger than the API server allows.
	ErrTooLarge = errors.New("manifest too large")
	// ErrDuplicate: an earlier file (in name order) defines a pod with the
	// same namespace and name.
	ErrDuplicate = errors.New("duplicate pod")
)

// ManifestError is the error of a manifest file that did not yield a pod.
// Its message names the file; Unwrap gives the kind (one of the Err*
// variables) and the underlying cause.
type ManifestError struct {
	// File is the manifest's path.
	File string
	// Kind is one of ErrUnreadable, ErrDecode, ErrNotPod, ErrInvalid,
	// ErrTooLarge, ErrDuplicate.
	Kind error
	// Fields holds the validation errors when Kind is ErrInvalid.
	Fields field.ErrorList
	// Err is the cause (nil when Fields says it all).
	Err error
}

func (e *ManifestError) Error() string {
	msg := fmt.Sprintf("static pod manifest %q: %v", e.File, e.Kind)
	switch {
	case len(e.Fields) > 0:
		return msg + ": " + e.Fields.ToAggregate().Error()
	case e.Err != nil:
		return msg + ": " + e.Err.Error()
	default:
		return msg
	}
}

// Unwrap returns the kind and the cause, so errors.Is works for both.
func (e *ManifestError) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func manifestError(file string, kind, cause error) *ManifestError {
	return &ManifestError{File: file, Kind: kind, Err: cause}
}
