package stats

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Host paths read through FS.
const (
	procStat     = "/proc/stat"
	procMeminfo  = "/proc/meminfo"
	procLoadavg  = "/proc/loadavg"
	procPidMax   = "/proc/sys/kernel/pid_max"
	procDir      = "/proc"
	cgroupRoot   = "/sys/fs/cgroup"
	cgroupV2Mark = cgroupRoot + "/cgroup.controllers"
)

// userHZ is the unit of /proc/stat's CPU times (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// hostCPU is the node's cumulative CPU time in nanoseconds: the root cgroup's, else the busy
// time of /proc/stat.
func hostCPU(ctx context.Context, f FS) (uint64, error) {
	if isCgroupV2(ctx, f) {
		if b, err := f.ReadFile(ctx, cgroupRoot+"/cpu.stat"); err == nil {
			if usec, ok := keyedValue(b, "usage_usec"); ok {
				return usec * 1000, nil
			}
		}
	} else {
		for _, dir := range []string{"cpuacct", "cpu,cpuacct", "cpu"} {
			if b, err := f.ReadFile(ctx, cgroupRoot+"/"+dir+"/cpuacct.usage"); err == nil {
				if n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64); err == nil {
					return n, nil
				}
			}
		}
	}
	b, err := f.ReadFile(ctx, procStat)
	if err != nil {
		return 0, fmt.Errorf("node CPU time: %w", err)
	}
	return procStatBusy(b)
}

// procStatBusy is the busy time (user nice system irq softirq steal; guest time is within
// user) of the "cpu" line of /proc/stat, in nanoseconds.
func procStatBusy(b []byte) (uint64, error) {
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		if len(fields) < 9 || fields[0] != "cpu" {
			continue
		}
		var busy uint64
		for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system _ _ irq softirq steal
			n, err := strconv.ParseUint(fields[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: field %d of the cpu line: %w", procStat, i, err)
			}
			busy += n
		}
		return busy * (uint64(time.Second) / userHZ), nil
	}
	return 0, fmt.Errorf("%s: no cpu line", procStat)
}

// bootTime is btime of /proc/stat.
func bootTime(ctx context.Context, f FS) (time.Time, error) {
	b, err := f.ReadFile(ctx, procStat)
	if err != nil {
		return time.Time{}, fmt.Errorf("boot time: %w", err)
	}
	if s, ok := keyedValue(b, "btime"); ok {
		return time.Unix(int64(s), 0), nil
	}
	return time.Time{}, fmt.Errorf("boot time: no btime in %s", procStat)
}

// hostMemory is the node's memory as the kubelet reports it.
type hostMemory struct {
	total, usage, workingSet, rss uint64
	pageFaults, majorPageFaults   *uint64
}

// available is total - workingSet, never negative.
func (m hostMemory) available() uint64 {
	if m.workingSet > m.total {
		return 0
	}
	return m.total - m.workingSet
}

// readHostMemory reads the root cgroup's memory (v1 or v2) and /proc/meminfo.
func readHostMemory(ctx context.Context, f FS) (hostMemory, error) {
	b, err := f.ReadFile(ctx, procMeminfo)
	if err != nil {
		return hostMemory{}, fmt.Errorf("node memory: %w", err)
	}
	mi := parseMeminfo(b)
	m := hostMemory{total: mi["MemTotal"]}
	if m.total == 0 {
		return hostMemory{}, fmt.Errorf("node memory: no MemTotal in %s", procMeminfo)
	}
	var stat []byte
	usageKnown := false
	inactive, rss, pgfault, pgmajfault := "inactive_file", "anon", "pgfault", "pgmajfault"
	if isCgroupV2(ctx, f) {
		stat, _ = f.ReadFile(ctx, cgroupRoot+"/memory.stat")
		if b, err := f.ReadFile(ctx, cgroupRoot+"/memory.current"); err == nil { // not at the root
			m.usage, usageKnown = parseUint(b)
		}
	} else {
		stat, _ = f.ReadFile(ctx, cgroupRoot+"/memory/memory.stat")
		inactive, rss, pgfault, pgmajfault = "total_inactive_file", "total_rss", "total_pgfault", "total_pgmajfault"
		if b, err := f.ReadFile(ctx, cgroupRoot+"/memory/memory.usage_in_bytes"); err == nil {
			m.usage, usageKnown = parseUint(b)
		}
	}
	if !usageKnown { // the v2 root: what the kernel has handed out
		m.usage = m.total - min(mi["MemFree"], m.total)
	}
	inactiveFile, ok := keyedValue(stat, inactive)
	if !ok {
		inactiveFile = mi["Inactive(file)"]
	}
	if m.rss, ok = keyedValue(stat, rss); !ok {
		m.rss = mi["AnonPages"]
	}
	if v, ok := keyedValue(stat, pgfault); ok {
		m.pageFaults = &v
	}
	if v, ok := keyedValue(stat, pgmajfault); ok {
		m.majorPageFaults = &v
	}
	if m.usage > inactiveFile {
		m.workingSet = m.usage - inactiveFile
	}
	return m, nil
}

// parseMeminfo maps /proc/meminfo's keys to bytes.
func parseMeminfo(b []byte) map[string]uint64 {
	out := make(map[string]uint64)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out
}

// keyedValue finds "key value" in a flat keyed file (cpu.stat, memory.stat, /proc/stat).
func keyedValue(b []byte, key string) (uint64, bool) {
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func parseUint(b []byte) (uint64, bool) {
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return n, err == nil
}

func isCgroupV2(ctx context.Context, f FS) bool {
	_, err := f.ReadFile(ctx, cgroupV2Mark)
	return err == nil
}

// readRlimit returns pid_max and the number of tasks (threads) on the host.
func readRlimit(ctx context.Context, f FS) (maxPID, tasks *int64, err error) {
	var errs []error
	if b, err := f.ReadFile(ctx, procPidMax); err != nil {
		errs = append(errs, err)
	} else if n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", procPidMax, err))
	} else {
		maxPID = &n
	}
	if n, err := countTasks(ctx, f); err != nil {
		errs = append(errs, err)
	} else {
		tasks = &n
	}
	return maxPID, tasks, errors.Join(errs...)
}

// countTasks is the total of /proc/loadavg's "running/total" field, else the number of
// process directories in /proc.
func countTasks(ctx context.Context, f FS) (int64, error) {
	if b, err := f.ReadFile(ctx, procLoadavg); err == nil {
		if fields := strings.Fields(string(b)); len(fields) >= 4 {
			if _, total, ok := strings.Cut(fields[3], "/"); ok {
				if n, err := strconv.ParseInt(total, 10, 64); err == nil {
					return n, nil
				}
			}
		}
	}
	names, err := f.ReadDirNames(ctx, procDir)
	if err != nil {
		return 0, fmt.Errorf("counting processes: %w", err)
	}
	var n int64
	for _, name := range names {
		if _, err := strconv.ParseUint(name, 10, 64); err == nil {
			n++
		}
	}
	return n, nil
}

// isNotExist reports whether err says a path does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
