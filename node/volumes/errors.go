package volumes

import (
	"errors"
	"fmt"
)

// Error kinds, for errors.Is. A SetUp error is one *VolumeError per failed
// volume; the kinds tell a caller whether to retry.
var (
	// ErrUnsupported: the volume's type, or a source of a projected
	// volume, is not one this package sets up (persistentVolumeClaim, csi,
	// nfs, emptyDir medium HugePages, clusterTrustBundle, ...). Retrying
	// cannot help.
	ErrUnsupported = errors.New("unsupported volume type")
	// ErrNotFound: a ConfigMap, Secret, key, container or host path the
	// volume needs does not exist (yet). The kubelet retries such mounts;
	// so may the caller.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the volume, as written, cannot be set up: an item path
	// that is absolute or escapes the volume, a hostPath of another type
	// than the one asked for, an unsupported fieldPath or resource.
	ErrInvalid = errors.New("invalid volume")
	// ErrUnavailable: the node lacks what the volume needs: no Source (no
	// API server) for a ConfigMap or Secret that is not optional, or no
	// TokenRequester for a serviceAccountToken projection.
	ErrUnavailable = errors.New("unavailable on this node")
)

// VolumeError is the failure of one volume of a pod. Its message is the
// kubelet's FailedMount message; Unwrap gives the cause, which carries one
// of the Err* kinds or the Source's own error (an API error).
type VolumeError struct {
	// Volume is the volume's name in the pod spec.
	Volume string
	Err    error
}

// Error is "MountVolume.SetUp failed for volume <name> : <cause>", for
// SetUp and Refresh alike (the kubelet's periodic remount says the same).
func (e *VolumeError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.Volume, e.Err)
}

func (e *VolumeError) Unwrap() error { return e.Err }

// kindError is an error with a kind: its message is err's alone, and
// errors.Is finds both err's chain and the kind.
type kindError struct{ kind, err error }

func (e kindError) Error() string   { return e.err.Error() }
func (e kindError) Unwrap() []error { return []error{e.err, e.kind} }

// errorf is fmt.Errorf with a kind.
func errorf(kind error, format string, args ...any) error {
	return kindError{kind: kind, err: fmt.Errorf(format, args...)}
}
