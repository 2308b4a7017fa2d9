package serve

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// versionOnly serves Version and nothing else.
type versionOnly struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
}

func (versionOnly) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{RuntimeName: "mine", RuntimeVersion: "0.1", RuntimeApiVersion: "v1"}, nil
}

// A runtime served in process answers its own calls over the connection,
// Unimplemented for the others; after stop, calls fail.
func TestInProcessServesARuntime(t *testing.T) {
	ctx := context.Background()
	conn, stop, err := InProcess(ctx, versionOnly{})
	if err != nil {
		t.Fatal(err)
	}
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	v, err := rc.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != "mine" {
		t.Fatalf("Version = %v, %v", v, err)
	}
	_, err = runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("ListImages: %v, want Unimplemented", err)
	}
	stop()
	stop() // idempotent
	if _, err := rc.Version(ctx, &runtimeapi.VersionRequest{}); err == nil {
		t.Error("Version after stop succeeded")
	}
}
