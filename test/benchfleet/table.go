package main

import (
	"fmt"
	"strings"
	"time"
)

// measure is one side's figures for one phase.
type measure struct {
	Wall time.Duration
	// CPUSeconds is the node process's CPU time spent in the phase.
	CPUSeconds float64
	// PeakRSS is the node process's VmHWM at the end of the phase (reset at
	// its start).
	PeakRSS uint64
	// Requests is how many requests the API server served in the phase.
	Requests float64
	Leases   leaseStats
	// Load is the load average at the end of the phase.
	Load string
	// Note is what went wrong, if anything (a deadline missed).
	Note string
}

// sides are the columns' order: KWOK first, the reference.
var sides = []string{"kwok", "actorlet"}

// sideTitle is how the table names a side.
var sideTitle = map[string]string{"kwok": "KWOK", "actorlet": "actorlet"}

// row is one phase's measures by side (a side that did not run it has none).
type row struct {
	Phase string
	By    map[string]*measure
}

// markdownTable renders rows side by side: one line per phase, each cell
// "KWOK / actorlet", and the ratio of the wall times.
func markdownTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| phase | wall (KWOK / actorlet) | actorlet / KWOK | node process CPU s | peak RSS | API requests | Leases > 40 s | longest Lease gap | nodes NotReady | load 1, 5, 15 min |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		cells := []string{r.Phase,
			pair(r, func(m *measure) string { return seconds(m.Wall) + note(m) }),
			ratio(r.By["actorlet"], r.By["kwok"]),
			pair(r, func(m *measure) string { return fmt.Sprintf("%.1f", m.CPUSeconds) }),
			pair(r, func(m *measure) string { return mebibytes(m.PeakRSS) }),
			pair(r, func(m *measure) string { return thousands(int64(m.Requests)) }),
			pair(r, func(m *measure) string { return thousands(int64(m.Leases.Stale)) }),
			pair(r, func(m *measure) string { return seconds(m.Leases.LongestGap) }),
			pair(r, func(m *measure) string { return thousands(int64(m.Leases.NotReady)) }),
			pair(r, func(m *measure) string { return m.Load }),
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// pair is the cell of both sides' values, "—" for a side without a measure.
func pair(r row, f func(*measure) string) string {
	var vs []string
	for _, s := range sides {
		if m := r.By[s]; m != nil {
			vs = append(vs, f(m))
		} else {
			vs = append(vs, "—")
		}
	}
	return strings.Join(vs, " / ")
}

func note(m *measure) string {
	if m.Note == "" {
		return ""
	}
	return " (" + m.Note + ")"
}

func ratio(a, b *measure) string {
	if a == nil || b == nil || b.Wall <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1fx", a.Wall.Seconds()/b.Wall.Seconds())
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// mebibytes renders bytes as MiB, or GiB from 1 GiB on.
func mebibytes(n uint64) string {
	const mib, gib = 1 << 20, 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", (n+mib/2)/mib)
}

// thousands renders n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
