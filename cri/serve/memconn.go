package serve

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/test/bufconn"
)

// memLink is the in-memory listener of one InProcess server and the
// client halves of the connections dialed to it.
//
// Why it exists: closing a client transport, gRPC sets deadlines on the
// connection (1 s to read, 10 s to write) so that its last writes cannot
// block forever. bufconn implements a deadline with a timer whose
// callback references the pipe, buffer and all, so each closed
// connection's buffers stayed reachable from the runtime's timer heap
// until those timers fired: with the former 1 MiB buffers, 2 MiB per
// connection for 1 s after stop, and 1 MiB of it for 10 s. memConn stops the timers when the
// connection closes, and memLink closes any connection gRPC has not closed
// by the time the server is stopped.
type memLink struct {
	lis *bufconn.Listener

	mu     sync.Mutex
	closed bool
	conns  map[*memConn]struct{} // client halves not yet closed
}

func newMemLink(lis *bufconn.Listener) *memLink {
	return &memLink{lis: lis, conns: make(map[*memConn]struct{})}
}

// dial connects to the listener; a gRPC context dialer.
func (l *memLink) dial(ctx context.Context, _ string) (net.Conn, error) {
	nc, err := l.lis.DialContext(ctx)
	if err != nil {
		return nil, err
	}
	c := &memConn{Conn: nc, link: l}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c, nil
}

// close closes the listener and every client half still open, and makes
// later dials fail. Idempotent.
func (l *memLink) close() {
	_ = l.lis.Close()
	l.mu.Lock()
	l.closed = true
	open := make([]*memConn, 0, len(l.conns))
	for c := range l.conns {
		open = append(open, c)
	}
	l.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

func (l *memLink) forget(c *memConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// memConn is the client half of a bufconn connection whose deadline
// timers are stopped when it closes; deadlines set after Close are
// ignored (a closed bufconn fails reads and writes at once anyway).
type memConn struct {
	net.Conn
	link *memLink

	mu     sync.Mutex
	closed bool
}

// Close closes the connection and stops its deadline timers. A second
// Close returns net.ErrClosed.
func (c *memConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
	}
	c.closed = true
	err := c.Conn.Close()
	_ = c.Conn.SetDeadline(time.Time{}) // stops both timers
	c.mu.Unlock()
	c.link.forget(c)
	return err
}

func (c *memConn) SetDeadline(t time.Time) error { return c.setDeadline(c.Conn.SetDeadline, t) }

func (c *memConn) SetReadDeadline(t time.Time) error { return c.setDeadline(c.Conn.SetReadDeadline, t) }

func (c *memConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(c.Conn.SetWriteDeadline, t)
}

func (c *memConn) setDeadline(set func(time.Time) error, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	return set(t)
}
