package probe

import (
	"context"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// tcpProbe succeeds if a TCP connection can be opened within timeout.
func tcpProbe(ctx context.Context, t Target, a *corev1.TCPSocketAction, timeout time.Duration) (Result, string) {
	host, err := t.host(a.Host)
	if err != nil {
		return Failure, err.Error()
	}
	port, err := t.port(a.Port)
	if err != nil {
		return Failure, err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Failure, err.Error()
	}
	_ = conn.Close()
	return Success, ""
}
