package journal

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serveT serves j on its socket until the test ends.
func serveT(t *testing.T, j *Journal, dir string) {
	t.Helper()
	l, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, SocketName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v, want mode 0600", fi.Mode(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// The event stream on the socket hands out the log from a position, and
// with follow=1 the records committed after the request too.
func TestEventStreamOnTheSocket(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	serveT(t, j, dir)
	appendT(t, j, "a", evs("a", 1, 3)...)
	appendT(t, j, "b", ev("b", 1))

	var lines []EventLine
	if err := ReadEvents(context.Background(), dir, 2, false, func(l EventLine) error {
		lines = append(lines, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[0].Position != 2 || lines[0].Pod != "a" || lines[0].Seq != 2 ||
		lines[2].Pod != "b" || lines[2].Event != "ContainerStarted" || !strings.Contains(string(lines[2].Data), "containerStarted") ||
		lines[2].Time == "" {
		t.Fatalf("from=2: %+v", lines)
	}

	// Following: a record appended while the client reads comes through.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []EventLine
	err := ReadEvents(ctx, dir, 4, true, func(l EventLine) error {
		got = append(got, l)
		if l.Position == 4 {
			appendT(t, j, "a", ev("a", 4)) // committed after the stream caught up
		}
		if l.Position == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadEvents with follow: %v", err)
	}
	if len(got) != 2 || got[1].Pod != "a" || got[1].Seq != 4 {
		t.Fatalf("followed: %+v, want b/1 at 4 then a/4 at 5", got)
	}
}

// A followed stream ends with the node's reason when the journal closes.
func TestEventStreamEndsWhenTheNodeStops(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	serveT(t, j, dir)
	appendT(t, j, "a", ev("a", 1))
	err := ReadEvents(context.Background(), dir, 0, true, func(EventLine) error {
		go j.Close()
		return nil
	})
	if !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("ReadEvents after Close: %v, want ErrStreamEnded", err)
	}
	mustContain(t, err, "closed")
}

func TestEventStreamRefusesABadCursor(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, testOptions(t))
	serveT(t, j, dir)
	resp, err := socketGet(context.Background(), dir, EventsPath+"?from=-3")
	if err == nil {
		resp.Body.Close()
		t.Fatal("from=-3 was accepted")
	}
	mustContain(t, err, "400", `from="-3"`)
	// A plain HTTP client can read the stream too.
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(dir, SocketName))
	}}}
	appendT(t, j, "a", ev("a", 1))
	resp, err = c.Get("http://node/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || !strings.HasPrefix(string(body), `{"position":1,"pod":"a","seq":1,`) {
		t.Fatalf("GET /events: %s %q", resp.Header.Get("Content-Type"), body)
	}
}
