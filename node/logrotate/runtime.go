package logrotate

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is what log rotation needs from the CRI runtime. *cri.Client satisfies it once it
// has ReopenContainerLog.
type Runtime interface {
	// ListContainers lists the containers matching filter (nil: all).
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	// ContainerStatus returns a container's full status; its LogPath is the full path of the
	// container's current log file. A missing container is an error of cri Kind NotFound.
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
	// ReopenContainerLog asks the runtime to close the container's log file and open a new
	// one at the same path (creating it).
	ReopenContainerLog(ctx context.Context, id string) error
}
