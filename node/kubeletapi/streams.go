package kubeletapi

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// streamSet tracks the connections hijacked for upgraded streams (exec,
// attach, port-forward), which http.Server no longer sees, so that the
// server can wait for them and close them when it stops. Safe for
// concurrent use.
type streamSet struct {
	mu     sync.Mutex
	conns  map[*streamConn]struct{}
	closed bool
	empty  chan struct{} // closed while conns is empty; replaced when one is added
}

func newStreamSet() *streamSet {
	empty := make(chan struct{})
	close(empty)
	return &streamSet{conns: make(map[*streamConn]struct{}), empty: empty}
}

// add tracks c; after closeAll, c is closed at once.
func (s *streamSet) add(c net.Conn) *streamConn {
	sc := &streamConn{Conn: c, set: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return sc
	}
	if len(s.conns) == 0 {
		s.empty = make(chan struct{})
	}
	s.conns[sc] = struct{}{}
	return sc
}

func (s *streamSet) remove(sc *streamConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[sc]; !ok {
		return
	}
	delete(s.conns, sc)
	if len(s.conns) == 0 {
		close(s.empty)
	}
}

// wait returns true once no stream is open, false if ctx ends first.
func (s *streamSet) wait(ctx context.Context) bool {
	s.mu.Lock()
	empty := s.empty
	s.mu.Unlock()
	select {
	case <-empty:
		return true
	case <-ctx.Done():
		return false
	}
}

// closeAll closes the open streams, and any later one at once.
func (s *streamSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*streamConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// streamConn is a hijacked connection that leaves its set when closed.
type streamConn struct {
	net.Conn
	set  *streamSet
	once sync.Once
}

func (c *streamConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.set.remove(c) })
	return err
}

// hijackTracker is the ResponseWriter given to the upgrade proxy: its
// Hijack puts the connection in the server's stream set.
type hijackTracker struct {
	http.ResponseWriter
	set *streamSet
}

func (h hijackTracker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("response writer %T cannot be hijacked", h.ResponseWriter)
	}
	c, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	return h.set.add(c), rw, nil
}
