package kubeletapi

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
)

// A log of four lines; the third is written in two partial records and
// interleaved with stderr.
const sampleLog = `2026-01-02T03:04:01.000000001Z stdout F one
2026-01-02T03:04:02Z stderr F two
2026-01-02T03:04:03Z stdout P thr
2026-01-02T03:04:03.5Z stdout F ee
not a CRI record
2026-01-02T03:04:04Z stdout F:x four
2026-01-02T03:04:05Z stdout F
`

func readSample(t *testing.T, content string, opts logOptions) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := readLog(context.Background(), f, &out, opts, logFollower{path: p, log: zap.NewNop()}); err != nil {
		t.Fatalf("readLog: %v", err)
	}
	return out.String()
}

func TestReadLog(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 3, 0, time.UTC)
	for _, tc := range []struct {
		name string
		opts logOptions
		want string
	}{
		{"all", logOptions{tailLines: -1}, "one\ntwo\nthree\nfour\n\n"},
		{"tail 2", logOptions{tailLines: 2}, "four\n\n"},
		{"tail 3 counts a partial line once", logOptions{tailLines: 3}, "three\nfour\n\n"},
		{"tail 0", logOptions{tailLines: 0}, ""},
		{"tail more than there is", logOptions{tailLines: 100}, "one\ntwo\nthree\nfour\n\n"},
		{"since", logOptions{tailLines: -1, since: since}, "three\nfour\n\n"},
		{"limit", logOptions{tailLines: -1, limitBytes: 6}, "one\ntw"},
		{"timestamps once a line", logOptions{tailLines: 3, timestamps: true},
			"2026-01-02T03:04:03Z three\n2026-01-02T03:04:04Z four\n2026-01-02T03:04:05Z \n"},
		{"timestamps keep nanoseconds", logOptions{tailLines: -1, timestamps: true, limitBytes: 35},
			"2026-01-02T03:04:01.000000001Z one\n"},
	} {
		if got := readSample(t, sampleLog, tc.opts); got != tc.want {
			t.Errorf("%s: got %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestReadLogIgnoresAnIncompleteLastRecord(t *testing.T) {
	got := readSample(t, "2026-01-02T03:04:01Z stdout F one\n2026-01-02T03:04:02Z stdout F tw", logOptions{tailLines: -1})
	if got != "one\n" {
		t.Errorf("got %q; want %q", got, "one\n")
	}
}

func TestParseCRILine(t *testing.T) {
	rec, err := parseCRILine([]byte("2026-01-02T03:04:01Z stderr P a b "))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.stderr || !rec.partial || string(rec.text) != "a b " {
		t.Errorf("parsed %+v", rec)
	}
	for _, bad := range []string{"", "2026-01-02T03:04:01Z", "yesterday stdout F x", "2026-01-02T03:04:01Z stdin F x", "2026-01-02T03:04:01Z stdout X x"} {
		if _, err := parseCRILine([]byte(bad)); err == nil {
			t.Errorf("parseCRILine(%q) succeeded", bad)
		}
	}
}

func TestParseLogQuery(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"tailLines=-1", 400},
		{"tailLines=x", 400},
		{"limitBytes=0", 400},
		{"sinceSeconds=0", 400},
		{"sinceTime=yesterday", 400},
		{"follow=maybe", 400},
		{"sinceSeconds=5&sinceTime=2026-01-02T03:04:00Z", 422},
	} {
		q, _ := parseQuery(tc.query)
		if _, _, status, err := parseLogQuery(q, now); err == nil || status != tc.status {
			t.Errorf("%s: status %d, error %v; want %d", tc.query, status, err, tc.status)
		}
	}
	q, _ := parseQuery("tail=all&sinceSeconds=5&previous=true&timestamps=1")
	opts, previous, _, err := parseLogQuery(q, now)
	if err != nil || opts.tailLines != -1 || !previous || !opts.timestamps || !opts.since.Equal(now.Add(-5*time.Second)) {
		t.Errorf("got %+v, previous %v, %v", opts, previous, err)
	}
}
