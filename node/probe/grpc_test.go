package probe

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
)

// grpcServer serves on 127.0.0.1 and returns its port; with hs, the
// health service too.
func grpcServer(t *testing.T, hs *health.Server) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	if hs != nil {
		healthpb.RegisterHealthServer(s, hs)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func grpcHandler(port int32, service string) corev1.ProbeHandler {
	a := &corev1.GRPCAction{Port: port}
	if service != "" {
		a.Service = &service
	}
	return corev1.ProbeHandler{GRPC: a}
}

func TestGRPCProbe(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	port := grpcServer(t, hs)
	var r Runner
	ctx := context.Background()
	tg := target("127.0.0.1")
	if res, msg := r.Probe(ctx, tg, grpcHandler(port, ""), time.Second); res != Success {
		t.Errorf("overall health: %v %q", res, msg)
	}
	if res, msg := r.Probe(ctx, tg, grpcHandler(port, "db"), time.Second); res != Failure || !strings.Contains(msg, "NOT_SERVING") {
		t.Errorf("NOT_SERVING service: %v %q", res, msg)
	}
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_SERVING)
	if res, msg := r.Probe(ctx, tg, grpcHandler(port, "db"), time.Second); res != Success {
		t.Errorf("SERVING service: %v %q", res, msg)
	}
	if res, msg := r.Probe(ctx, tg, grpcHandler(port, "nope"), time.Second); res != Failure || !strings.Contains(msg, "NotFound") {
		t.Errorf("unknown service: %v %q", res, msg)
	}

	bare := grpcServer(t, nil)
	if res, msg := r.Probe(ctx, tg, grpcHandler(bare, ""), time.Second); res != Failure || !strings.Contains(msg, "does not implement") {
		t.Errorf("server without health service: %v %q", res, msg)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := int32(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	if res, msg := r.Probe(ctx, tg, grpcHandler(closed, ""), 200*time.Millisecond); res != Failure {
		t.Errorf("nothing listening: %v %q", res, msg)
	}
}
