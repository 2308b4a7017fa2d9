package probe

import (
	"context"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestTCPProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	h := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}
	var r Runner
	if res, msg := r.Probe(context.Background(), target("127.0.0.1"), h, time.Second); res != Success {
		t.Fatalf("open port: %v %q", res, msg)
	}
	_ = ln.Close()
	if res, msg := r.Probe(context.Background(), target("127.0.0.1"), h, time.Second); res != Failure || msg == "" {
		t.Fatalf("closed port: %v %q", res, msg)
	}
}
