package serve

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/test/bufconn"
)

// TestMemLinkClose checks that closing a memLink closes the connections
// still open, refuses new ones, and that a closed memConn ignores
// deadlines.
func TestMemLinkClose(t *testing.T) {
	ctx := context.Background()
	link := newMemLink(bufconn.Listen(4096))
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := link.lis.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := link.dial(ctx, "")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	defer server.Close()
	if err := c.SetDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("SetDeadline on an open connection: %v", err)
	}

	link.close()
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("Write on a connection of a closed link succeeded")
	}
	if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetWriteDeadline after close = %v, want net.ErrClosed", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close = %v, want net.ErrClosed", err)
	}
	if _, err := link.dial(ctx, ""); err == nil {
		t.Error("dial on a closed link succeeded")
	}
	if len(link.conns) != 0 {
		t.Errorf("closed link still tracks %d connections", len(link.conns))
	}
}
