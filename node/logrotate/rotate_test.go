package logrotate

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/actorlet/actorlet/cri"
)

const (
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	exited  = runtimeapi.ContainerState_CONTAINER_EXITED
)

// t0 is the fake clock's start; rotated files made then end in ".20240301-120000".
var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// testPolicy rotates at 10 bytes and keeps 3 files.
func testPolicy() Policy {
	return Policy{MaxSize: 10, MaxFiles: 3, MonitorInterval: 10 * time.Second, MaxWorkers: 1}
}

type harness struct {
	rt    *fakeRuntime
	clock *clocktesting.FakeClock
	logs  *observer.ObservedLogs
	m     *Manager
}

func newHarness(t *testing.T, p Policy) *harness {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h := &harness{rt: newFakeRuntime(), clock: clocktesting.NewFakeClock(t0), logs: logs}
	m, err := New(h.rt, p, WithClock(h.clock), WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	return h
}

func (h *harness) rotateOnce(t *testing.T) {
	t.Helper()
	if err := h.m.RotateOnce(context.Background()); err != nil {
		t.Fatalf("RotateOnce: %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

func assertNames(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("files in dir = %q, want %q", got, want)
	}
}

func TestRotateOnceRotatesLargeLog(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log", "0.log.20240301-120000")
	if got := readFile(t, log+".20240301-120000"); got != "0123456789abc" {
		t.Errorf("rotated file holds %q, want the old log", got)
	}
	if got := readFile(t, log); got != "" {
		t.Errorf("current log holds %q after reopen, want empty", got)
	}
	if got := h.rt.reopenCalls(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("ReopenContainerLog calls = %q, want [c1]", got)
	}
	entries := h.logs.FilterMessage("rotated container log").FilterField(zap.String("containerID", "c1")).All()
	if len(entries) != 1 {
		t.Fatalf("got %d \"rotated container log\" records for c1, want 1; all: %v", len(entries), h.logs.All())
	}
	if got := entries[0].ContextMap()["rotated"]; got != log+".20240301-120000" {
		t.Errorf("logged rotated = %v", got)
	}
}

func TestRotateOnceAtExactlyMaxSize(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789") // 10 bytes: rotated, as by the kubelet
	h.rt.add("c1", log, running, true)
	h.rotateOnce(t)
	assertNames(t, dir, "0.log", "0.log.20240301-120000")
}

// TestRotateOnceAsksEachContainersStatusOnce: a container's log path is
// asked of the runtime once while it stays listed (it never changes), and
// again after it left the listing; a log that grows later is still rotated.
func TestRotateOnceAsksEachContainersStatusOnce(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "012345678") // below MaxSize
	h.rt.add("c1", log, running, true)
	_, log2 := logDir(t)
	writeFile(t, log2, "0")
	h.rt.add("c2", log2, running, true)

	h.rotateOnce(t)
	h.rotateOnce(t)
	if a, b := h.rt.statusCalls("c1"), h.rt.statusCalls("c2"); a != 1 || b != 1 {
		t.Fatalf("ContainerStatus calls after two passes: c1 %d, c2 %d; want 1 each", a, b)
	}

	h.rt.remove("c2")
	h.rotateOnce(t)
	h.rt.add("c2", log2, running, true)
	h.rotateOnce(t)
	if got := h.rt.statusCalls("c2"); got != 2 {
		t.Errorf("ContainerStatus calls of c2, listed again after it was gone: %d, want 2", got)
	}

	writeFile(t, log, "0123456789abc") // now at least MaxSize
	h.rotateOnce(t)
	if got := h.rt.statusCalls("c1"); got != 1 {
		t.Errorf("ContainerStatus calls of c1: %d, want 1", got)
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("files in dir = %q, want the log and one rotated file", names)
	}
}

func TestRotateOnceLeavesSmallLog(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "012345678") // 9 bytes
	writeFile(t, log+".20240301-115900", "older")
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log", "0.log.20240301-115900")
	if got := readFile(t, log); got != "012345678" {
		t.Errorf("log holds %q, want it untouched", got)
	}
	if got := h.rt.reopenCalls(); len(got) != 0 {
		t.Errorf("ReopenContainerLog calls = %q, want none", got)
	}
}

func TestRotateOnceCompressesOlderRotatedFiles(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "current log content")
	writeFile(t, log+".20240301-115900", "previous rotation")
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log", "0.log.20240301-115900.gz", "0.log.20240301-120000")
	if got := gunzip(t, log+".20240301-115900.gz"); got != "previous rotation" {
		t.Errorf("gunzipped %q, want %q", got, "previous rotation")
	}
	if got := readFile(t, log+".20240301-120000"); got != "current log content" {
		t.Errorf("newest rotated file holds %q (it must stay uncompressed)", got)
	}
}

func TestRotateOnceKeepsAtMostMaxFiles(t *testing.T) {
	h := newHarness(t, testPolicy()) // MaxFiles 3
	dir, log := logDir(t)
	writeFile(t, log, "current log content")
	writeFile(t, log+".20240301-115700.gz", "x")
	writeFile(t, log+".20240301-115800.gz", "x")
	writeFile(t, log+".20240301-115900", "newest rotated")
	// Not rotation's files: left alone.
	writeFile(t, log+".backup", "mine")
	writeFile(t, filepath.Join(dir, "1.log.20240301-115000"), "another log's")
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log", "0.log.20240301-115900.gz", "0.log.20240301-120000", "0.log.backup",
		"1.log.20240301-115000")
	if got := gunzip(t, log+".20240301-115900.gz"); got != "newest rotated" {
		t.Errorf("gunzipped %q", got)
	}
}

// TestRotationsKeepNewestData rotates repeatedly and checks, after each pass, that at most
// MaxFiles files exist and that reading RotatedFiles then the current log gives back the last
// MaxFiles-1 chunks written, in order.
func TestRotationsKeepNewestData(t *testing.T) {
	for _, maxFiles := range []int{2, 3, 5} {
		t.Run(fmt.Sprint("maxFiles=", maxFiles), func(t *testing.T) {
			p := testPolicy()
			p.MaxFiles = maxFiles
			h := newHarness(t, p)
			dir, log := logDir(t)
			writeFile(t, log, "")
			h.rt.add("c1", log, running, true)
			var chunks []string
			for i := range 8 {
				chunk := fmt.Sprintf("chunk %02d\n", i) // 9 bytes: two writes exceed MaxSize
				f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.WriteString(f, chunk+chunk); err != nil {
					t.Fatal(err)
				}
				f.Close()
				chunks = append(chunks, chunk+chunk)

				h.rotateOnce(t)
				h.clock.Step(p.MonitorInterval)

				if n := len(dirNames(t, dir)); n > maxFiles {
					t.Fatalf("round %d: %d files %q, want at most %d", i, n, dirNames(t, dir), maxFiles)
				}
				rotated, err := RotatedFiles(log)
				if err != nil {
					t.Fatal(err)
				}
				var all bytes.Buffer
				for _, r := range rotated {
					if strings.HasSuffix(r, ".gz") {
						all.WriteString(gunzip(t, r))
					} else {
						all.WriteString(readFile(t, r))
					}
				}
				all.WriteString(readFile(t, log))
				want := strings.Join(chunks[max(0, len(chunks)-(maxFiles-1)):], "")
				if all.String() != want {
					t.Fatalf("round %d: logs read back as %q, want %q", i, all.String(), want)
				}
			}
			if got := len(h.rt.reopenCalls()); got != 8 {
				t.Errorf("ReopenContainerLog called %d times, want 8", got)
			}
		})
	}
}

func TestRotateOnceRenamesBackWhenReopenFails(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	h.rt.add("c1", log, running, true)
	reopenErr := errors.New("runtime says no")
	h.rt.setReopenErr(reopenErr)

	err := h.m.RotateOnce(context.Background())
	if !errors.Is(err, reopenErr) || !strings.Contains(err.Error(), `"c1"`) {
		t.Fatalf("RotateOnce = %v, want an error naming c1 and wrapping the reopen error", err)
	}
	assertNames(t, dir, "0.log")
	if got := readFile(t, log); got != "0123456789abc" {
		t.Errorf("log holds %q after renaming back", got)
	}
	if got := h.rt.reopenCalls(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("ReopenContainerLog calls = %q, want [c1]", got)
	}

	// The next pass retries.
	h.rt.setReopenErr(nil)
	h.clock.Step(10 * time.Second)
	h.rotateOnce(t)
	assertNames(t, dir, "0.log", "0.log.20240301-120010")
}

func TestRotateOnceLeavesExitedAndUnmanagedContainers(t *testing.T) {
	for _, ignoreFilter := range []bool{false, true} {
		t.Run(fmt.Sprint("runtimeIgnoresFilter=", ignoreFilter), func(t *testing.T) {
			h := newHarness(t, testPolicy())
			h.rt.ignoreFilter = ignoreFilter
			exitedDir, exitedLog := logDir(t)
			writeFile(t, exitedLog, "0123456789abc")
			writeFile(t, exitedLog+".20240301-115900", "older")
			h.rt.add("exited", exitedLog, exited, true)
			otherDir, otherLog := logDir(t)
			writeFile(t, otherLog, "0123456789abc")
			h.rt.add("not-ours", otherLog, running, false)

			h.rotateOnce(t)

			assertNames(t, exitedDir, "0.log", "0.log.20240301-115900")
			assertNames(t, otherDir, "0.log")
			if got := h.rt.reopenCalls(); len(got) != 0 {
				t.Errorf("ReopenContainerLog calls = %q, want none", got)
			}
			// The runtime is asked for running, managed containers only.
			if len(h.rt.filters) != 1 {
				t.Fatalf("%d ListContainers calls, want 1", len(h.rt.filters))
			}
			f := h.rt.filters[0]
			if f.GetState().GetState() != running || len(f.GetLabelSelector()) != 1 ||
				f.GetLabelSelector()["io.actorlet.managed"] != "true" {
				t.Errorf("ListContainers filter = %v, want running and io.actorlet.managed=true", f)
			}
		})
	}
}

func TestRotateOnceSkipsContainerThatStoppedSinceListing(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	h.rt.add("c1", log, running, true)
	h.rt.statuses["c1"].State = exited // listed as running, exited by the status call

	h.rotateOnce(t)
	assertNames(t, dir, "0.log")
}

func TestRotateOnceRemovesLeftovers(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	writeFile(t, log+".20240301-115800", "compressed already, original not removed")
	writeFile(t, log+".20240301-115800.gz", "x")
	writeFile(t, log+".20240301-115900.tmp", "interrupted compression")
	h.rt.add("c1", log, running, true)

	var rotations []Rotation
	m, err := New(h.rt, testPolicy(), WithClock(h.clock), WithOnRotation(func(r Rotation) { rotations = append(rotations, r) }))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RotateOnce(context.Background()); err != nil {
		t.Fatal(err)
	}

	assertNames(t, dir, "0.log", "0.log.20240301-115800.gz", "0.log.20240301-120000")
	if len(rotations) != 1 {
		t.Fatalf("got %d rotations, want 1", len(rotations))
	}
	wantRemoved := []string{log + ".20240301-115800", log + ".20240301-115900.tmp"}
	if !slices.Equal(rotations[0].Removed, wantRemoved) {
		t.Errorf("Removed = %q, want %q", rotations[0].Removed, wantRemoved)
	}
}

func TestRotateOncePostponesWithinTheSameSecond(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	writeFile(t, log+".20240301-120000", "rotated this second")
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log", "0.log.20240301-120000")
	if got := readFile(t, log+".20240301-120000"); got != "rotated this second" {
		t.Errorf("rotated file overwritten: %q", got)
	}
	if got := h.rt.reopenCalls(); len(got) != 0 {
		t.Errorf("ReopenContainerLog calls = %q, want none", got)
	}
}

func TestRotateOnceReopensMissingLog(t *testing.T) {
	h := newHarness(t, testPolicy())
	dir, log := logDir(t)
	h.rt.add("c1", log, running, true)

	h.rotateOnce(t)

	assertNames(t, dir, "0.log")
	if got := h.rt.reopenCalls(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("ReopenContainerLog calls = %q, want [c1]", got)
	}
}

// A container removed between the listing and the reopen of its missing
// log (its pod deleted meanwhile) is no failure of the pass.
func TestRotateOnceContainerGoneBeforeReopen(t *testing.T) {
	h := newHarness(t, testPolicy())
	_, log := logDir(t)
	h.rt.add("c1", log, running, true)
	h.rt.setReopenErr(&cri.Error{Op: "ReopenContainerLog", ID: "c1", Kind: cri.NotFound, Err: errors.New("no such container")})
	if err := h.m.RotateOnce(context.Background()); err != nil {
		t.Fatalf("RotateOnce = %v, want nil: the container is gone", err)
	}
	if got := h.rt.reopenCalls(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("ReopenContainerLog calls = %q, want [c1]", got)
	}
}

func TestRotateOnceManyContainersManyWorkers(t *testing.T) {
	p := testPolicy()
	p.MaxWorkers = 3
	h := newHarness(t, p)
	var dirs []string
	for i := range 7 {
		dir, log := logDir(t)
		writeFile(t, log, "0123456789abc")
		h.rt.add(fmt.Sprint("c", i), log, running, true)
		dirs = append(dirs, dir)
	}
	h.rotateOnce(t)
	for _, dir := range dirs {
		assertNames(t, dir, "0.log", "0.log.20240301-120000")
	}
	if got := len(h.rt.reopenCalls()); got != 7 {
		t.Errorf("ReopenContainerLog called %d times, want 7", got)
	}
}

func TestRotateOnceDisabled(t *testing.T) {
	p := testPolicy()
	p.MaxSize = -1
	h := newHarness(t, p)
	dir, log := logDir(t)
	writeFile(t, log, "0123456789abc")
	h.rt.add("c1", log, running, true)
	h.rotateOnce(t)
	assertNames(t, dir, "0.log")
}

func TestRotatedFiles(t *testing.T) {
	dir, log := logDir(t)
	for _, name := range []string{
		"0.log", "0.log.20240301-115900", "0.log.20240301-115700.gz", "0.log.20240301-115800.gz",
		"0.log.20240301-115800", // leftover: its .gz exists
		"0.log.20240301-120000.tmp", "0.log.backup", "0.log.2024", "1.log.20240301-115000",
	} {
		writeFile(t, filepath.Join(dir, name), "x")
	}
	got, err := RotatedFiles(log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{log + ".20240301-115700.gz", log + ".20240301-115800.gz", log + ".20240301-115900"}
	if !slices.Equal(got, want) {
		t.Errorf("RotatedFiles = %q, want %q", got, want)
	}
	if _, err := RotatedFiles(filepath.Join(dir, "missing", "0.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RotatedFiles in a missing dir: err = %v, want ErrNotExist", err)
	}
}
