package upstream

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartProc starts name with args in its own process group, logging its
// stdout and stderr to logPath, and stops the whole group at tb's cleanup
// (SIGTERM, then SIGKILL after 15 s); if tb failed, the log's tail is
// printed.
func StartProc(tb testing.TB, logPath, name string, args ...string) {
	tb.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		tb.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if tb.Failed() {
			Tail(tb, logPath, 30)
		}
	})
}

// Tail logs the last n lines of the file at path.
func Tail(tb testing.TB, path string, n int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	tb.Logf("--- last lines of %s:\n%s", path, strings.Join(lines[max(len(lines)-n, 0):], "\n"))
}
