package journal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// SocketName is the unix socket, in the journal's directory, on which a
// running node serves its journal (Serve): a consistent copy of the file (the
// way `actorlet journal` reads a journal whose file the node holds locked)
// and the stream of its events, for event handlers in any language.
const SocketName = "journal.sock"

// The paths Serve answers.
const (
	// CopyPath answers a consistent copy of the journal file (WriteCopy).
	CopyPath = "/journal.db"
	// EventsPath answers the log's records as newline-delimited JSON, one
	// EventLine per record, in log order (see Records and Follow), from
	// position ?from=N (default 1). With ?follow=1 the response goes on with
	// every record as it is committed, until the client goes away or the node
	// stops; without it, it ends after the last record committed.
	EventsPath = "/events"
)

// Listen creates the socket dir/SocketName for Serve, mode 0600 (only the
// node's user may connect: the socket is the authorization); a stale one from
// an earlier run is replaced.
func Listen(dir string) (net.Listener, error) {
	path := filepath.Join(dir, SocketName)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("journal socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("journal socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("journal socket %s: %w", path, err)
	}
	return l, nil
}

// Serve answers HTTP requests on l (see CopyPath and EventsPath) until ctx
// ends (it then closes l and every stream and returns nil) or l fails. Copies
// are written one at a time, so that readers cannot pile copies up in memory
// or on the socket; event streams run side by side.
func (j *Journal) Serve(ctx context.Context, l net.Listener) error {
	var copying sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CopyPath, func(w http.ResponseWriter, r *http.Request) {
		copying.Lock()
		defer copying.Unlock()
		w.Header().Set("Content-Type", "application/octet-stream")
		if _, err := j.WriteCopy(r.Context(), w); err != nil {
			j.log.Warn("serving a journal copy failed", zap.Error(err))
		}
	})
	mux.HandleFunc("GET "+EventsPath, j.serveEvents)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	err := srv.Serve(l)
	if ctx.Err() != nil || errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return fmt.Errorf("serve journal %s: %w", j.path, err)
}

// serveEvents answers EventsPath.
func (j *Journal) serveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var from uint64
	if s := q.Get("from"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("from=%q: want a record position (an unsigned integer)", s), http.StatusBadRequest)
			return
		}
		from = n
	}
	follow := false
	if s := q.Get("follow"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			http.Error(w, fmt.Sprintf("follow=%q: want 1 or 0", s), http.StatusBadRequest)
			return
		}
		follow = b
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the client knows the stream is open
	enc := newLineEncoder(w)
	handle := func(rec Record) error {
		if err := enc.encode(NewEventLine(rec)); err != nil {
			return err
		}
		return rc.Flush()
	}
	var err error
	if follow {
		err = j.Follow(r.Context(), from, handle)
	} else {
		err = j.Records(r.Context(), from, handle)
	}
	if err != nil && r.Context().Err() == nil {
		// The stream ends with the reason (the node stopping: ErrClosed).
		_ = enc.encode(EventLine{Error: err.Error()})
		_ = rc.Flush()
	}
}

// FetchCopy asks the node serving dir/SocketName for a copy of its journal
// and stores it as into/FileName (mode 0600), ready for OpenReadOnly(into).
func FetchCopy(ctx context.Context, dir, into string) error {
	path := filepath.Join(dir, SocketName)
	resp, err := socketGet(ctx, dir, CopyPath)
	if err != nil {
		return fmt.Errorf("fetch a journal copy from %s: %w", path, err)
	}
	defer resp.Body.Close()
	f, err := os.OpenFile(filepath.Join(into, FileName), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("fetch a journal copy from %s: %w", path, err)
	}
	n, err := f.ReadFrom(resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n == 0 {
		err = errors.New("the node sent nothing")
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("fetch a journal copy from %s: %w", path, err)
	}
	return nil
}

// socketGet sends GET path (with its query) to the node serving
// dir/SocketName; a status other than 200 is an error with the node's
// message.
func socketGet(ctx context.Context, dir, path string) (*http.Response, error) {
	sock := filepath.Join(dir, SocketName)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		DisableKeepAlives: true,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://journal"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg := make([]byte, 512)
		n, _ := resp.Body.Read(msg)
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, msg[:n])
	}
	return resp, nil
}
