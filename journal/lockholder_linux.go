package journal

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder returns the PID of the process holding a flock on the file at
// path, from /proc/locks. Entries are matched by inode and, when they agree,
// device; best effort: ok is false if it cannot tell.
func lockHolder(path string) (pid int, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()

	wantDev := devString(uint64(st.Dev))
	inodeOnly := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters have
		// "->" after the index.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		p, err := strconv.Atoi(fields[4])
		if err != nil {
			continue
		}
		id := fields[5]
		i := strings.LastIndexByte(id, ':')
		if i < 0 || id[i+1:] != strconv.FormatUint(st.Ino, 10) {
			continue
		}
		if id[:i] == wantDev {
			return p, true
		}
		// Device numbers can differ (overlay file systems): remember a
		// match by inode alone.
		if inodeOnly == 0 {
			inodeOnly = p
		}
	}
	return inodeOnly, inodeOnly != 0
}

// devString formats a Linux dev_t as /proc/locks does ("%02x:%02x").
func devString(dev uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	return hex2(major) + ":" + hex2(minor)
}

func hex2(n uint64) string {
	s := strconv.FormatUint(n, 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}
