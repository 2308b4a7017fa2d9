package main

import "testing"

func TestReadProcUsage(t *testing.T) {
	u, err := readProcUsage("testdata/proc", 4242)
	if err != nil {
		t.Fatal(err)
	}
	// utime 12345 + stime 678 clock ticks at 100 per second
	if want := 130.23; u.CPUSeconds < want-1e-9 || u.CPUSeconds > want+1e-9 {
		t.Errorf("CPU seconds %v, want %v", u.CPUSeconds, want)
	}
	if want := uint64(9751 * 1024); u.HWMBytes != want {
		t.Errorf("VmHWM %d bytes, want %d", u.HWMBytes, want)
	}
	if want := uint64(8000 * 1024); u.RSSBytes != want {
		t.Errorf("VmRSS %d bytes, want %d", u.RSSBytes, want)
	}
}

func TestReadProcUsageOfMissingProcess(t *testing.T) {
	if _, err := readProcUsage("testdata/proc", 4243); err == nil {
		t.Fatal("no error for a process that is not there")
	}
}

func TestLoadAverage(t *testing.T) {
	got, err := loadAverage("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	if want := "7.84, 2.99, 1.17"; got != want {
		t.Errorf("load %q, want %q", got, want)
	}
}
