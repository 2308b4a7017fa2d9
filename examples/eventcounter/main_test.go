package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actorlet/actorlet/journal"
)

// runEnv makes the test binary run the example (see TestMain), so the test
// needs no go build.
const runEnv = "EVENTCOUNTER_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// start runs the example in its own process on root.
func start(t *testing.T, root string) *exec.Cmd {
	t.Helper()
	return startArgs(t, "--root-dir", root)
}

// startArgs runs the example in its own process with args.
func startArgs(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// handled reads the log of the handler of the node in root.
func handled(t *testing.T, root string) []uint64 {
	t.Helper()
	return handledIn(t, filepath.Join(root, "eventcounter"))
}

// handledIn reads the handler's log in its state dir: the positions in the
// order logged.
func handledIn(t *testing.T, stateDir string) []uint64 {
	t.Helper()
	f, err := os.Open(filepath.Join(stateDir, "handled.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue // a line being written
		}
		pos, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			t.Fatalf("handled.log line %q", sc.Text())
		}
		out = append(out, pos)
	}
	return out
}

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

// journalEnd is the last position the running node has committed, read
// from its event stream on the journal socket.
func journalEnd(t *testing.T, root string) uint64 {
	t.Helper()
	var last uint64
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := journal.ReadEvents(ctx, root, 1, false, func(l journal.EventLine) error {
		if l.Position != last+1 {
			return fmt.Errorf("the node's stream jumps from %d to %d", last, l.Position)
		}
		last = l.Position
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return last
}

// The event counter is killed with SIGKILL while the node journals events,
// and started again with its saved cursor: its log then holds every
// position the node committed, each once, in order, with no gap.
func TestEventCounterResumesAfterKill9WithNoGapAndNoLoss(t *testing.T) {
	root := t.TempDir()
	cmd := start(t, root)
	waitFor(t, "30 events handled", func() (bool, string) {
		n := len(handled(t, root))
		return n >= 30, fmt.Sprintf("%d handled", n)
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	before := len(handled(t, root))

	cmd = start(t, root)
	waitFor(t, "30 more events handled after the restart", func() (bool, string) {
		n := len(handled(t, root))
		return n >= before+30, fmt.Sprintf("%d handled, %d before the kill", n, before)
	})
	// Everything the node has committed reaches the handler.
	var end uint64
	waitFor(t, "the node started", func() (bool, string) {
		_, err := os.Stat(filepath.Join(root, journal.SocketName))
		return err == nil, fmt.Sprint(err)
	})
	end = journalEnd(t, root)
	waitFor(t, "the handler caught up with the node", func() (bool, string) {
		h := handled(t, root)
		return len(h) > 0 && h[len(h)-1] >= end, fmt.Sprintf("handled up to %d of %d", len(h), end)
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("eventcounter after SIGTERM: %v", err)
	}
	h := handled(t, root)
	for i, pos := range h {
		if pos != uint64(i+1) {
			t.Fatalf("handled.log line %d is position %d: a gap or a duplicate (kill -9 after line %d)", i+1, pos, before)
		}
	}
	if uint64(len(h)) < end {
		t.Fatalf("handled %d positions; the node had committed %d", len(h), end)
	}
}

// Out of process: a reader of the node's event stream on its journal socket
// is killed with SIGKILL while the node goes on journaling, and started
// again with its saved cursor: its log then holds every position the node
// committed, each once, in order, also those committed while it was dead.
func TestEventStreamReaderResumesAfterKill9WhileTheNodeRuns(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	node := start(t, root)
	reader := startArgs(t, "--node-root-dir", root, "--state-dir", state)
	waitFor(t, "30 events read", func() (bool, string) {
		n := len(handledIn(t, state))
		return n >= 30, fmt.Sprintf("%d read", n)
	})
	if err := reader.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = reader.Wait()
	h := handledIn(t, state)
	before := h[len(h)-1]
	waitFor(t, "20 more events committed while the reader is dead", func() (bool, string) {
		end := journalEnd(t, root)
		return end >= before+20, fmt.Sprintf("the node is at %d, the reader stopped at %d", end, before)
	})
	reader = startArgs(t, "--node-root-dir", root, "--state-dir", state)
	end := journalEnd(t, root)
	waitFor(t, "the reader caught up with the node", func() (bool, string) {
		h := handledIn(t, state)
		return len(h) > 0 && h[len(h)-1] >= end, fmt.Sprintf("read up to %d of %d", len(h), end)
	})
	for _, cmd := range []*exec.Cmd{reader, node} {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("eventcounter after SIGTERM: %v", err)
		}
	}
	for i, pos := range handledIn(t, state) {
		if pos != uint64(i+1) {
			t.Fatalf("the reader's line %d is position %d: a gap or a duplicate (kill -9 after position %d)", i+1, pos, before)
		}
	}
}
