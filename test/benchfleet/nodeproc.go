package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// errExitedEarly is a node process that ended while it was measured.
var errExitedEarly = errors.New("node process exited")

// nodeProc is the process that plays the nodes: KWOK or `actorlet fleet`.
type nodeProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done closes
}

// startNodeProc starts bin with args, its output in logDir/<name>.log, in
// this process's environment plus env.
func startNodeProc(name, logDir, bin string, env []string, args ...string) (*nodeProc, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("log directory %s: %w", logDir, err)
	}
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &nodeProc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *nodeProc) pid() int { return p.cmd.Process.Pid }

// exited is an error if the process has ended, else nil.
func (p *nodeProc) exited() error {
	select {
	case <-p.done:
		if p.err == nil {
			return fmt.Errorf("%s: %w", p.name, errExitedEarly)
		}
		return fmt.Errorf("%s: %w: %w", p.name, errExitedEarly, p.err)
	default:
		return nil
	}
}

// stop sends SIGTERM and waits up to grace for the exit, then kills it.
func (p *nodeProc) stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop in %s: killed", p.name, grace)
	}
}
