package stats

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// fakeFS is an FS with fixed content.
type fakeFS struct {
	files  map[string]string
	statfs map[string]FsInfo
	du     map[string][2]uint64 // path -> bytes, inodes
}

var _ FS = (*fakeFS)(nil)

func (f *fakeFS) ReadFile(_ context.Context, name string) ([]byte, error) {
	if s, ok := f.files[name]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (f *fakeFS) ReadDirNames(_ context.Context, name string) ([]string, error) {
	set := map[string]bool{}
	for p := range f.files {
		if rest, ok := strings.CutPrefix(p, name+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			set[first] = true
		}
	}
	if len(set) == 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

func (f *fakeFS) Statfs(_ context.Context, p string) (FsInfo, error) {
	if fi, ok := f.statfs[path.Clean(p)]; ok {
		return fi, nil
	}
	return FsInfo{}, &fs.PathError{Op: "statfs", Path: p, Err: fs.ErrNotExist}
}

func (f *fakeFS) DiskUsage(_ context.Context, p string) (uint64, uint64, error) {
	if u, ok := f.du[p]; ok {
		return u[0], u[1], nil
	}
	return 0, 0, fmt.Errorf("disk usage of %s: %w", p, fs.ErrNotExist)
}

const (
	gib = 1 << 30
	mib = 1 << 20
)

// hostV1 is a cgroup v1 host: 16 GiB, 10 GiB of it in use of which 2 GiB inactive files.
func hostV1() *fakeFS {
	return &fakeFS{
		files: map[string]string{
			"/proc/stat": "cpu  1000 50 300 90000 20 10 5 2 0 0\ncpu0 1000 50 300 90000 20 10 5 2 0 0\n" +
				"intr 1 2 3\nctxt 42\nbtime 1700000000\nprocesses 99\n",
			"/proc/meminfo":                               "MemTotal:       16777216 kB\nMemFree:         4194304 kB\nMemAvailable:    8388608 kB\nInactive(file):  1048576 kB\nAnonPages:       3145728 kB\n",
			"/proc/loadavg":                               "0.50 0.40 0.30 3/412 12345\n",
			"/proc/sys/kernel/pid_max":                    "4194304\n",
			"/sys/fs/cgroup/cpuacct/cpuacct.usage":        "123456789000\n",
			"/sys/fs/cgroup/memory/memory.usage_in_bytes": fmt.Sprint(10*gib) + "\n",
			"/sys/fs/cgroup/memory/memory.stat": "cache 100\nrss 200\ntotal_cache 5\ntotal_rss " + fmt.Sprint(3*gib) +
				"\ntotal_inactive_file " + fmt.Sprint(2*gib) + "\ntotal_pgfault 77\ntotal_pgmajfault 7\n",
		},
		statfs: map[string]FsInfo{
			"/var/lib/actorlet": {CapacityBytes: 100 * gib, AvailableBytes: 60 * gib, UsedBytes: 35 * gib, Inodes: 1000, InodesFree: 400},
		},
	}
}

// hostV2 is a cgroup v2 host whose root has cpu.stat and memory.stat but no memory.current.
func hostV2() *fakeFS {
	f := hostV1()
	for k := range f.files {
		if strings.HasPrefix(k, "/sys/fs/cgroup/") {
			delete(f.files, k)
		}
	}
	delete(f.files, "/proc/loadavg")
	f.files["/sys/fs/cgroup/cgroup.controllers"] = "cpuset cpu io memory pids\n"
	f.files["/sys/fs/cgroup/cpu.stat"] = "usage_usec 5000000\nuser_usec 3000000\nsystem_usec 2000000\n"
	f.files["/sys/fs/cgroup/memory.stat"] = "anon " + fmt.Sprint(gib) + "\nfile 5\ninactive_file " + fmt.Sprint(gib) + "\npgfault 11\npgmajfault 1\n"
	for _, pid := range []string{"1", "2", "300", "self", "sys/kernel/pid_max"} {
		if pid != "sys/kernel/pid_max" {
			f.files["/proc/"+pid+"/stat"] = "x"
		}
	}
	return f
}
