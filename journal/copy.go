package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// SocketName is the unix socket, in the journal's directory, on which a
// running node serves copies of its journal (ServeCopies): the way
// `actorlet journal` reads a journal whose file the node holds locked.
const SocketName = "journal.sock"

// WriteCopy writes a consistent copy of the journal file to w: a complete
// bbolt file as of one read transaction (bbolt's Tx.WriteTo), which
// OpenReadOnly can open. Writers are not held up.
func (j *Journal) WriteCopy(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("copy journal %s: %w", j.path, err)
	}
	var n int64
	err := j.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("copy journal %s: %w", j.path, err)
	}
	return n, nil
}

// ServeCopies answers every connection accepted on l with a consistent copy
// of the journal (WriteCopy) and closes it; it returns when ctx ends or l
// fails. It serves one copy at a time, so that readers cannot pile copies
// up in memory or on the socket.
func (j *Journal) ServeCopies(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("serve journal copies: %w", err)
		}
		if _, err := j.WriteCopy(ctx, c); err != nil {
			j.log.Warn("serving a journal copy failed", zap.Error(err))
		}
		_ = c.Close()
	}
}

// ListenCopies creates the socket dir/SocketName (mode 0600; a stale one
// from an earlier run is replaced) for ServeCopies.
func ListenCopies(dir string) (net.Listener, error) {
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

// FetchCopy asks the node serving dir/SocketName for a copy of its journal
// and stores it as into/FileName (mode 0600), ready for OpenReadOnly(into).
func FetchCopy(ctx context.Context, dir, into string) error {
	path := filepath.Join(dir, SocketName)
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("fetch a journal copy from %s: %w", path, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	f, err := os.OpenFile(filepath.Join(into, FileName), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("fetch a journal copy from %s: %w", path, err)
	}
	n, err := io.Copy(f, c)
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
