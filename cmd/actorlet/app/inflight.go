package app

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// inflightLimit is a RoundTripper that lets at most cap(slots) of its
// requests be in flight at once, from their sending to their response
// body's close; the others wait for a slot (or their context). Watches
// are not counted: each holds its stream for as long as it lasts.
//
// The fleet's nodes share one connection pool. Go's HTTP/2 transport dials
// a new connection for each request that finds every connection at the
// server's stream limit (MAX_CONCURRENT_STREAMS), so a thousand nodes'
// status writers at once opened one TLS connection per waiting request:
// 4,317 of them while 20,000 pods were deleted, each with its buffers on
// both sides. Waiting here instead keeps the pool at a few connections.
type inflightLimit struct {
	slots chan struct{}
	next  http.RoundTripper
}

// newInflightLimit bounds next's requests to n in flight; n <= 0 is no bound.
func newInflightLimit(n int, next http.RoundTripper) http.RoundTripper {
	if n <= 0 {
		return next
	}
	return &inflightLimit{slots: make(chan struct{}, n), next: next}
}

func (l *inflightLimit) RoundTrip(r *http.Request) (*http.Response, error) {
	if isWatch(r) {
		return l.next.RoundTrip(r)
	}
	select {
	case l.slots <- struct{}{}:
	case <-r.Context().Done():
		return nil, fmt.Errorf("%s %s: waiting for one of the fleet's %d API requests in flight: %w", r.Method, r.URL.Path, cap(l.slots), r.Context().Err())
	}
	resp, err := l.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		<-l.slots
		return resp, err
	}
	resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// isWatch reports whether r asks for a watch (client-go's ?watch=true).
func isWatch(r *http.Request) bool {
	switch r.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	return false
}

// releaseOnClose gives the request's slot back when its body is closed,
// once.
type releaseOnClose struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releaseOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
