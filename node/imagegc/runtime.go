package imagegc

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is what image garbage collection needs from the CRI runtime.
// *cri.Client satisfies it once it has ImageFsInfo.
type Runtime interface {
	// ListImages lists the images matching filter (nil: all).
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
	// RemoveImage removes the image; an absent image counts as removed.
	RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error
	// ImageFsInfo reports the usage of the filesystems holding images.
	ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error)
	// ListContainers lists containers matching filter (nil: all, in every state).
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
}
