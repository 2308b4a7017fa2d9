package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

var (
	// ErrUnsupportedEndpoint: the listen address is neither unix:// nor a
	// loopback tcp:// address.
	ErrUnsupportedEndpoint = errors.New("unsupported CRI endpoint")
	// ErrSocketInUse: another server is accepting connections on the socket.
	ErrSocketInUse = errors.New("CRI socket in use by a live server")
)

// Listen opens listen for serving; cleanup closes the listener and removes
// the socket file (if it is still the one Listen made).
//
// listen is "unix:///absolute/path.sock": the parent directory is created
// (0750), a stale socket file is replaced (a socket with a live server
// behind it is ErrSocketInUse; a non-socket file is an error), the socket
// appears atomically with mode 0660. "tcp://127.0.0.1:port" (any loopback
// address or localhost) is accepted too; any other address is
// ErrUnsupportedEndpoint.
func Listen(listen string) (l net.Listener, cleanup func(), err error) {
	u, err := url.Parse(listen)
	if err != nil {
		return nil, nil, fmt.Errorf("CRI endpoint %q: %w: %w", listen, ErrUnsupportedEndpoint, err)
	}
	switch u.Scheme {
	case "unix":
		if u.Host != "" || !filepath.IsAbs(u.Path) {
			return nil, nil, fmt.Errorf("CRI endpoint %q: %w: want unix:///absolute/path", listen, ErrUnsupportedEndpoint)
		}
		return listenUnix(filepath.Clean(u.Path))
	case "tcp":
		host, _, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, nil, fmt.Errorf("CRI endpoint %q: %w: %w", listen, ErrUnsupportedEndpoint, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, nil, fmt.Errorf("CRI endpoint %q: %w: tcp only on a loopback address", listen, ErrUnsupportedEndpoint)
		}
		l, err := net.Listen("tcp", u.Host)
		if err != nil {
			return nil, nil, fmt.Errorf("listening on %s: %w", listen, err)
		}
		return l, func() { _ = l.Close() }, nil
	default:
		return nil, nil, fmt.Errorf("CRI endpoint %q: %w: want unix:///path or tcp://127.0.0.1:port", listen, ErrUnsupportedEndpoint)
	}
}

// listenUnix binds a socket under a temporary name in the same directory,
// sets its mode, then renames it over path, so that clients never see it
// with a wider mode and a stale socket is replaced atomically.
func listenUnix(path string) (net.Listener, func(), error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("creating socket directory %s: %w", dir, err)
	}
	if err := checkStale(path); err != nil {
		return nil, nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(dir, ".sock-"+hex.EncodeToString(b[:]))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, func(), error) {
		_ = l.Close()
		_ = os.Remove(tmp)
		return nil, nil, err
	}
	if err := os.Chmod(tmp, 0o660); err != nil {
		return fail(fmt.Errorf("chmod socket %s: %w", tmp, err))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("moving socket to %s: %w", path, err))
	}
	ours, err := os.Lstat(path)
	if err != nil {
		return fail(fmt.Errorf("socket %s: %w", path, err))
	}
	cleanup := func() {
		_ = l.Close()
		if cur, err := os.Lstat(path); err == nil && os.SameFile(ours, cur) {
			_ = os.Remove(path)
		}
	}
	return l, cleanup, nil
}

// checkStale fails if path is something other than a socket, or a socket
// a server still accepts connections on.
func checkStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("socket path %s exists and is not a socket (%v)", path, fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("socket %s: %w", path, ErrSocketInUse)
	}
	return nil
}
