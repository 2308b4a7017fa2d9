package sim

import (
	"context"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageFsMountpoint is the mountpoint ImageFsInfo reports.
const imageFsMountpoint = ImageFsMountpoint

// ImageFsMountpoint is the mountpoint ImageFsInfo reports. It is not a
// directory of the host: its capacity is ImageFsCapacity.
const ImageFsMountpoint = "/var/lib/actorlet-sim/images"

// ImageFsCapacity is the simulated image filesystem's size (100 GiB).
const ImageFsCapacity = 100 << 30

// PullImage "pulls" an image: it is recorded under its normalised name
// ("busybox" is docker.io/library/busybox:latest) with ID
// "sha256:" + hex(sha256(normalised name)), size 1 MiB, and that ID is
// returned as image_ref. Pulling again returns the same ID.
//
// Errors: InvalidArgument for an empty or malformed reference; NotFound,
// naming the image, if the reference contains "notfound".
func (r *Runtime) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	ref, err := parseImageRef(name)
	if err != nil {
		return nil, err
	}
	unlock, err := r.begin(ctx, "PullImage")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if strings.Contains(strings.ToLower(name), "notfound") {
		return nil, newErr(ErrNotFound, "PullImage %q: failed to resolve reference %q: %s: not found (simulated)", name, ref, ref)
	}
	img := r.images.add(ref, req.GetImage().GetAnnotations())
	r.log.Debug("image pulled", zap.String("image", ref.String()), zap.String("id", img.id))
	return &runtimeapi.PullImageResponse{ImageRef: img.id}, nil
}

// ImageStatus returns the image named by an ID or reference, or a nil
// image when it is not present (not an error, per the CRI).
func (r *Runtime) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	unlock, err := r.begin(ctx, "ImageStatus")
	if err != nil {
		return nil, err
	}
	defer unlock()
	resp := &runtimeapi.ImageStatusResponse{}
	if img := r.images.resolve(req.GetImage().GetImage()); img != nil {
		resp.Image = img.toCRI()
		if req.GetVerbose() {
			resp.Info = map[string]string{"info": `{"simulated":true}`}
		}
	}
	return resp, nil
}

// ListImages lists all images, or with a filter only the image it names.
func (r *Runtime) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	imgs, err := r.listImages(ctx, "ListImages", req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListImagesResponse{Images: imgs}, nil
}

// StreamImages is ListImages in chunks of at most 500.
func (r *Runtime) StreamImages(req *runtimeapi.StreamImagesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamImagesResponse]) error {
	imgs, err := r.listImages(stream.Context(), "StreamImages", req.GetFilter())
	if err != nil {
		return err
	}
	return sendChunks(imgs, func(c []*runtimeapi.Image) error {
		return stream.Send(&runtimeapi.StreamImagesResponse{Images: c})
	})
}

func (r *Runtime) listImages(ctx context.Context, method string, f *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	unlock, err := r.begin(ctx, method)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []*runtimeapi.Image
	if want := f.GetImage().GetImage(); want != "" {
		if img := r.images.resolve(want); img != nil {
			out = append(out, img.toCRI())
		}
		return out, nil
	}
	for _, img := range r.images.sorted() {
		out = append(out, img.toCRI())
	}
	return out, nil
}

// RemoveImage forgets the image and all its names. Containers using it
// keep running. Idempotent: an absent image is not an error.
func (r *Runtime) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	unlock, err := r.begin(ctx, "RemoveImage")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if img := r.images.resolve(req.GetImage().GetImage()); img != nil {
		r.images.remove(img)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports one image filesystem holding all images (1 MiB and
// one inode each, plus a small base).
func (r *Runtime) ImageFsInfo(ctx context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	unlock, err := r.begin(ctx, "ImageFsInfo")
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := uint64(len(r.images.byID))
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp:  r.now(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
		UsedBytes:  &runtimeapi.UInt64Value{Value: 4096 + n*simImageSize},
		InodesUsed: &runtimeapi.UInt64Value{Value: 1 + n},
	}}}, nil
}
