package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
)

// grpcProbe calls grpc.health.v1.Health/Check for the probe's service
// (plaintext, the pod IP); SERVING is Success, anything else Failure.
func grpcProbe(ctx context.Context, t Target, a *corev1.GRPCAction, timeout time.Duration) (Result, string) {
	host, err := t.host("")
	if err != nil {
		return Failure, err.Error()
	}
	service := ""
	if a.Service != nil {
		service = *a.Service
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(a.Port)))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(UserAgent))
	if err != nil {
		return Failure, fmt.Sprintf("error: failed to connect service %q: %v", addr, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		switch status.Code(err) {
		case codes.Unimplemented:
			return Failure, fmt.Sprintf("this server does not implement the grpc health protocol (grpc.health.v1.Health): %v", err)
		case codes.DeadlineExceeded:
			return Failure, fmt.Sprintf("timeout: health rpc to %s did not complete within %v", addr, timeout)
		}
		return Failure, fmt.Sprintf("error: health rpc probe to %s failed: %v", addr, err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus())
	}
	return Success, ""
}
