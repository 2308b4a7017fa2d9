package journal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The test binary re-executes itself to act as another actorlet process:
// TestMain calls runHelper when helperEnv is set.
const (
	roleHold       = "hold"        // open the journal, print "ready", hold it until stdin closes
	roleAppendLoop = "append-loop" // append forever, printing each acknowledged call
	helperDirEnv   = "ACTORLET_JOURNAL_TEST_DIR"
)

// killPods is how many pods the append-loop helper writes concurrently.
const killPods = 4

func runHelper(role string) int {
	dir := os.Getenv(helperDirEnv)
	ctx := context.Background()
	j, err := Open(ctx, dir, Options{OpenTimeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper: open:", err)
		return 2
	}
	switch role {
	case roleHold:
		fmt.Printf("ready %d\n", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := j.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "helper: close:", err)
			return 2
		}
		return 0
	case roleAppendLoop:
		var mu sync.Mutex
		errc := make(chan error, killPods)
		for p := range killPods {
			go func() { errc <- appendLoop(ctx, j, fmt.Sprintf("kill-%d", p), &mu) }()
		}
		err := <-errc
		fmt.Fprintln(os.Stderr, "helper: append loop:", err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "helper: unknown role", role)
	return 2
}

// appendLoop appends calls of 1 to 3 events to pod uid until it fails,
// printing "ack <uid> <last seq>" after each Append returned nil. Each event
// records its call (first seq and size) so that the parent can check that no
// call was stored in part.
func appendLoop(ctx context.Context, j *Journal, uid string, stdout *sync.Mutex) error {
	last := uint64(0)
	s, err := j.Load(ctx, uid)
	switch {
	case err == nil:
		last = s.LastSeq()
	case !errors.Is(err, ErrNotFound):
		return err
	}
	for {
		n := 1 + int(last%3)
		batch := make([]*pb.Envelope, n)
		for i := range batch {
			batch[i] = callEvent(uid, last+1+uint64(i), last+1, n)
		}
		if err := j.Append(ctx, uid, batch...); err != nil {
			return err
		}
		last += uint64(n)
		stdout.Lock()
		_, err := fmt.Fprintf(os.Stdout, "ack %s %d\n", uid, last)
		stdout.Unlock()
		if err != nil {
			return err
		}
	}
}

// callEvent is event seq of an Append call that starts at first with n events.
func callEvent(uid string, seq, first uint64, n int) *pb.Envelope {
	return &pb.Envelope{Seq: seq, PodUid: uid, Event: &pb.Event{Kind: &pb.Event_ContainerCreated{
		ContainerCreated: &pb.ContainerCreated{Name: strconv.FormatUint(first, 10), Attempt: uint32(n)},
	}}}
}

// startHelper starts the test binary as a helper process in role for dir.
func startHelper(t *testing.T, role, dir string) (cmd *exec.Cmd, stdin io.WriteCloser, lines <-chan string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, helperDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			for range ch {
			}
			_ = cmd.Wait()
		}
	})
	return cmd, stdin, ch
}

// nextLine waits for the helper's next output line.
func nextLine(t *testing.T, lines <-chan string) (string, bool) {
	t.Helper()
	select {
	case l, ok := <-lines:
		return l, ok
	case <-time.After(30 * time.Second):
		t.Fatal("helper process printed nothing for 30s")
		return "", false
	}
}
