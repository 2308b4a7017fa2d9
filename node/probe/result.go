package probe

import "fmt"

// Result is the outcome of one probe, or of a worker's thresholded probes.
type Result int

const (
	// Unknown: nothing was decided (a startup probe's initial result, or
	// a probe that could not be carried out).
	Unknown Result = iota
	// Success: the container passed.
	Success
	// Failure: the container failed.
	Failure
)

func (r Result) String() string {
	switch r {
	case Unknown:
		return "Unknown"
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Kind is the kind of a probe.
type Kind int

const (
	Startup Kind = iota
	Liveness
	Readiness
)

func (k Kind) String() string {
	switch k {
	case Startup:
		return "Startup"
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// initialResult is a worker's result before any probe decided, as in the
// kubelet: a container with a readiness probe is not ready until it
// passes; liveness is presumed; startup is undecided.
func (k Kind) initialResult() Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// Report is a change of a worker's thresholded result.
type Report struct {
	Kind        Kind
	Container   string // container name
	ContainerID string
	Result      Result
	Message     string // the last probe's output or error, may be empty
}
