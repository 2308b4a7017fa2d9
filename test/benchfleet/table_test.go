package main

import (
	"testing"
	"time"
)

func TestMarkdownTable(t *testing.T) {
	rows := []row{
		{Phase: "1,000 nodes Ready", By: map[string]*measure{
			"kwok": {Wall: 8800 * time.Millisecond, CPUSeconds: 2.25, PeakRSS: 80 << 20, Requests: 4321,
				Leases: leaseStats{LongestGap: 10 * time.Second}, Load: "1.00, 2.00, 3.00"},
			"actorlet": {Wall: 27100 * time.Millisecond, CPUSeconds: 129.6, PeakRSS: 9986 << 20, Requests: 1234567,
				Leases: leaseStats{Stale: 517, LongestGap: 117600 * time.Millisecond, NotReady: 65}, Load: "4.00, 5.00, 6.00", Note: "timed out"},
		}},
		{Phase: "faulty: held 2m0s", By: map[string]*measure{
			"actorlet": {Wall: 2 * time.Minute, Load: "0.50, 0.40, 0.30"},
		}},
	}
	want := "| phase | wall (KWOK / actorlet) | actorlet / KWOK | node process CPU s | peak RSS | API requests | Leases > 40 s | longest Lease gap | nodes NotReady | load 1, 5, 15 min |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| 1,000 nodes Ready | 8.8 s / 27.1 s (timed out) | 3.1x | 2.2 / 129.6 | 80 MiB / 9.8 GiB | 4,321 / 1,234,567 | 0 / 517 | 10.0 s / 117.6 s | 0 / 65 | 1.00, 2.00, 3.00 / 4.00, 5.00, 6.00 |\n" +
		"| faulty: held 2m0s | — / 120.0 s | — | — / 0.0 | — / 0 MiB | — / 0 | — / 0 | — / 0.0 s | — / 0 | — / 0.50, 0.40, 0.30 |\n"
	if got := markdownTable(rows); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMebibytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 MiB", 80 << 20: "80 MiB", (1 << 30) - 1: "1024 MiB", 3 << 29: "1.5 GiB"} {
		if got := mebibytes(n); got != want {
			t.Errorf("mebibytes(%d) = %q, want %q", n, got, want)
		}
	}
}
