package sim

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestPullNotFound(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	_, err := c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "registry.example/team/notfound:v1"}})
	wantCode(t, err, codes.NotFound, "PullImage of a missing image")
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "registry.example/team/notfound:v1") {
		t.Errorf("error message %q does not name the image", msg)
	}
	resp, err := c.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "registry.example/team/notfound:v1"}})
	noErr(t, err, "ImageStatus")
	if resp.Image != nil {
		t.Fatalf("failed pull left an image: %v", resp.Image)
	}
	// Creating a container from an image that was never pulled fails.
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	_, err = c.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("a", "alpine")})
	wantCode(t, err, codes.NotFound, "CreateContainer with an image not pulled")
	_, err = c.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{}})
	wantCode(t, err, codes.InvalidArgument, "PullImage without image")
}

func TestImageNormalisationAndRemoval(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	id := pull(t, ctx, rt, "busybox")
	if again := pull(t, ctx, rt, "docker.io/library/busybox:latest"); again != id {
		t.Fatalf("busybox and docker.io/library/busybox:latest differ: %s vs %s", id, again)
	}
	other := pull(t, ctx, rt, "quay.io/org/app:1.0")
	for _, ref := range []string{"busybox", "busybox:latest", "library/busybox", "docker.io/library/busybox", "index.docker.io/library/busybox:latest", id, strings.TrimPrefix(id, "sha256:")} {
		resp, err := rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		noErr(t, err, "ImageStatus "+ref)
		if resp.Image == nil || resp.Image.Id != id {
			t.Errorf("ImageStatus(%q) = %v, want image %s", ref, resp.Image, id)
		}
	}
	resp, err := rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	noErr(t, err, "ImageStatus")
	img := resp.Image
	if len(img.RepoTags) != 1 || img.RepoTags[0] != "docker.io/library/busybox:latest" || len(img.RepoDigests) != 1 ||
		!strings.HasPrefix(img.RepoDigests[0], "docker.io/library/busybox@sha256:") || img.Size != 1<<20 {
		t.Errorf("image = %v", img)
	}
	list, err := rt.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	noErr(t, err, "ListImages")
	if len(list.Images) != 2 {
		t.Fatalf("ListImages = %d images, want 2", len(list.Images))
	}
	list, err = rt.ListImages(ctx, &runtimeapi.ListImagesRequest{Filter: &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: "quay.io/org/app:1.0"}}})
	noErr(t, err, "ListImages filtered")
	if len(list.Images) != 1 || list.Images[0].Id != other {
		t.Fatalf("filtered ListImages = %v", list.Images)
	}
	fs, err := rt.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	noErr(t, err, "ImageFsInfo")
	if u := fs.ImageFilesystems[0]; u.UsedBytes.Value < 2<<20 || u.Timestamp <= 0 || u.FsId.Mountpoint == "" {
		t.Errorf("ImageFsInfo = %v", u)
	}

	for range 2 {
		_, err = rt.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:latest"}})
		noErr(t, err, "RemoveImage")
	}
	resp, err = rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: id}})
	noErr(t, err, "ImageStatus after removal")
	if resp.Image != nil {
		t.Fatalf("removed image still present: %v", resp.Image)
	}
}

// TestContainerOutlivesItsImage: status falls back to the config's spec.
func TestContainerOutlivesItsImage(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	id := pull(t, ctx, rt, "busybox")
	cfg := podConfig("p", "u", 0)
	sb := runPod(t, ctx, rt, cfg)
	c := createContainer(t, ctx, rt, sb, cfg, containerConfig("a", id))
	_, err := rt.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: id}})
	noErr(t, err, "RemoveImage")
	st := containerStatus(t, ctx, rt, c)
	if st.Image.Image != id || st.ImageRef != id || st.ImageId != id {
		t.Fatalf("status image = %v %q %q", st.Image, st.ImageRef, st.ImageId)
	}
}

func TestParseImageRef(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                         "docker.io/library/busybox:latest",
		"busybox:1.36":                    "docker.io/library/busybox:1.36",
		"user/app":                        "docker.io/user/app:latest",
		"localhost/app":                   "localhost/app:latest",
		"localhost:5000/app:v2":           "localhost:5000/app:v2",
		"registry.k8s.io/pause:3.10":      "registry.k8s.io/pause:3.10",
		"quay.io/a/b/c@sha256:abcd":       "quay.io/a/b/c@sha256:abcd",
		"busybox:1.36@sha256:abcd":        "docker.io/library/busybox@sha256:abcd",
		"index.docker.io/library/busybox": "docker.io/library/busybox:latest",
	} {
		r, err := parseImageRef(in)
		if err != nil || r.String() != want {
			t.Errorf("parseImageRef(%q) = %q, %v; want %q", in, r, err, want)
		}
	}
	for _, bad := range []string{"", "Busybox", "busybox:", "a//b", "busybox@nodigest"} {
		if _, err := parseImageRef(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("parseImageRef(%q) error = %v, want ErrInvalidArgument", bad, err)
		}
	}
}
