package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/prometheus/procfs"
)

// procUsage is what /proc says of one process at one instant.
type procUsage struct {
	// CPUSeconds is utime+stime of /proc/<pid>/stat, in seconds.
	CPUSeconds float64
	// HWMBytes is VmHWM of /proc/<pid>/status: the peak resident set since
	// the process started or since its peak was last reset.
	HWMBytes uint64
	// RSSBytes is VmRSS of /proc/<pid>/status: the resident set now.
	RSSBytes uint64
}

// readProcUsage reads pid's usage from the proc file system mounted at
// procRoot (normally /proc; a directory of fixtures in tests).
func readProcUsage(procRoot string, pid int) (procUsage, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return procUsage{}, fmt.Errorf("open proc file system %s: %w", procRoot, err)
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return procUsage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	stat, err := p.Stat()
	if err != nil {
		return procUsage{}, fmt.Errorf("stat of process %d: %w", pid, err)
	}
	status, err := p.NewStatus()
	if err != nil {
		return procUsage{}, fmt.Errorf("status of process %d: %w", pid, err)
	}
	return procUsage{CPUSeconds: stat.CPUTime(), HWMBytes: status.VmHWM, RSSBytes: status.VmRSS}, nil
}

// resetPeakRSS sets pid's VmHWM to its current RSS (writing 5 to
// /proc/<pid>/clear_refs, see proc(5)), so that the next VmHWM is the peak
// of the phase that starts now.
func resetPeakRSS(pid int) error {
	path := "/proc/" + strconv.Itoa(pid) + "/clear_refs"
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak RSS of process %d: %w", pid, err)
	}
	return nil
}

// loadAverage is the machine's load averages over 1, 5 and 15 minutes, as
// "1.02, 0.80, 0.55", read from procRoot's loadavg.
func loadAverage(procRoot string) (string, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return "", fmt.Errorf("open proc file system %s: %w", procRoot, err)
	}
	l, err := fs.LoadAvg()
	if err != nil {
		return "", fmt.Errorf("load average: %w", err)
	}
	return fmt.Sprintf("%.2f, %.2f, %.2f", l.Load1, l.Load5, l.Load15), nil
}
