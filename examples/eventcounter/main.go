// Command eventcounter runs an actorlet node on the in-process simulated
// runtime with an event handler (agent.EventHandler) that counts the node's
// journaled events by kind, keeping its cursor on disk, so that after a
// kill -9 and a restart it resumes where it stopped: no event lost, none
// counted twice.
//
//	go run ./examples/eventcounter --root-dir /tmp/ec
//
// The handler's files, in --state-dir (default <root-dir>/eventcounter):
//
//	handled.log  one line per record handed to it: "<position> <pod uid> <seq> <event>"
//	             (at least once: a record handed out again after a crash is
//	             logged again; the position tells the duplicate)
//	cursor       the position after the last record whose line is durable
//
// It prints the counts when it stops (SIGINT, SIGTERM).
//
// With --node-root-dir it runs no node: it reads the event stream of the
// node running in that root dir, on its journal socket (GET /events, as a
// program in any language would), with the same cursor and files; killed
// and started again, it resumes while the node goes on.
//
//	go run ./examples/eventcounter --node-root-dir /tmp/ec --state-dir /tmp/ec-reader
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/examples/internal/simnode"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/node/agent"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "eventcounter:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("eventcounter", flag.ContinueOnError)
	root := fs.String("root-dir", "", "the node's root dir (journal.db, journal.sock); required")
	stateDir := fs.String("state-dir", "", "the handler's files (default <root-dir>/eventcounter)")
	nodeRoot := fs.String("node-root-dir", "", "read the stream of the node running there instead of running one (needs --state-dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *nodeRoot != "" {
		if *root != "" || *stateDir == "" {
			return errors.New("--node-root-dir takes --state-dir and no --root-dir")
		}
		return readStream(*nodeRoot, *stateDir)
	}
	if *root == "" {
		return errors.New("--root-dir is required")
	}
	if *stateDir == "" {
		*stateDir = filepath.Join(*root, "eventcounter")
	}
	counter, err := openCounter(*stateDir)
	if err != nil {
		return err
	}
	defer counter.close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, _ := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))
	node, err := simnode.Start(ctx, *root, pods(), log, agent.WithEventHandler(counter))
	if err != nil {
		return err
	}
	fmt.Printf("eventcounter: node running in %s, resuming from position %d\n", *root, counter.next)
	<-ctx.Done()
	err = node.Stop(context.Background())
	counter.print()
	return err
}

// pods keep the node's journal busy: a web server, and a container that
// exits every 100 ms and is restarted (with the lifecycle's back-off).
func pods() []*corev1.Pod {
	mk := func(name string, env ...corev1.EnvVar) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("eventcounter-" + name)},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{
				{Name: "app", Image: "example.com/app:1", ImagePullPolicy: corev1.PullIfNotPresent, Env: env}}},
		}
	}
	return []*corev1.Pod{
		mk("web"),
		mk("crashloop", corev1.EnvVar{Name: "SIM_EXIT_AFTER", Value: "100ms"}, corev1.EnvVar{Name: "SIM_EXIT_CODE", Value: "1"}),
	}
}

// counter is the event handler. Its cursor is on disk: Handle appends the
// record's line to handled.log (fsynced), then replaces the cursor file. A
// crash between the two hands the record out again on restart; openCounter
// sees its line already in the log and starts after it, so each position is
// counted once.
type counter struct {
	dir    string
	log    *os.File
	next   uint64
	counts map[string]int
}

func openCounter(dir string) (*counter, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	c := &counter{dir: dir, counts: map[string]int{}, next: 1}
	if b, err := os.ReadFile(filepath.Join(dir, "cursor")); err == nil {
		if c.next, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return nil, fmt.Errorf("cursor file %s: %w", filepath.Join(dir, "cursor"), err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "handled.log"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	// Count what the log holds; a line cut by a crash is dropped.
	var kept int64
	seen := map[uint64]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) != 4 {
			break
		}
		pos, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			break
		}
		kept += int64(len(line)) + 1
		if !seen[pos] {
			seen[pos] = true
			c.counts[fields[3]]++
		}
		c.next = max(c.next, pos+1) // logged, its cursor maybe not: done
	}
	if err := f.Truncate(kept); err != nil {
		return nil, err
	}
	if _, err := f.Seek(kept, 0); err != nil {
		return nil, err
	}
	c.log = f
	return c, nil
}

// Cursor implements agent.EventHandler.
func (c *counter) Cursor(context.Context) (uint64, error) { return c.next, nil }

// Handle implements agent.EventHandler.
func (c *counter) Handle(_ context.Context, rec journal.Record) error {
	kind := "Damaged"
	if rec.Envelope != nil {
		kind = rec.Envelope.Event.Name()
	}
	return c.count(rec.Position, rec.PodUID, rec.Seq, kind)
}

// count logs and counts the event at position, once.
func (c *counter) count(position uint64, pod string, seq uint64, kind string) error {
	if position < c.next {
		return nil // handled before the restart: a duplicate
	}
	if _, err := fmt.Fprintf(c.log, "%d %s %d %s\n", position, pod, seq, kind); err != nil {
		return err
	}
	if err := c.log.Sync(); err != nil {
		return err
	}
	c.counts[kind]++
	c.next = position + 1
	return writeFileAtomic(filepath.Join(c.dir, "cursor"), []byte(strconv.FormatUint(c.next, 10)+"\n"))
}

// readStream counts the events of the node running in nodeRoot from its
// event stream, from the saved cursor, until SIGINT or SIGTERM; a stream
// that breaks (the node stopping or not started yet) is read again from
// the cursor a second later.
func readStream(nodeRoot, stateDir string) error {
	counter, err := openCounter(stateDir)
	if err != nil {
		return err
	}
	defer counter.close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("eventcounter: reading the events of the node in %s from position %d\n", nodeRoot, counter.next)
	for ctx.Err() == nil {
		err := journal.ReadEvents(ctx, nodeRoot, counter.next, true, func(l journal.EventLine) error {
			kind := l.Event
			if l.Damage != "" {
				kind = "Damaged"
			}
			return counter.count(l.Position, l.Pod, l.Seq, kind)
		})
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintln(os.Stderr, "eventcounter:", err, "(reading again from the cursor)")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	counter.print()
	return nil
}

func (c *counter) print() {
	kinds := make([]string, 0, len(c.counts))
	total := 0
	for k, n := range c.counts {
		kinds = append(kinds, k)
		total += n
	}
	sort.Strings(kinds)
	fmt.Printf("eventcounter: %d events up to position %d\n", total, c.next-1)
	for _, k := range kinds {
		fmt.Printf("  %-22s %d\n", k, c.counts[k])
	}
}

func (c *counter) close() { _ = c.log.Close() }

// writeFileAtomic replaces path with data: a crash leaves the old or the
// new content.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
