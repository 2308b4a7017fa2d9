package main

import (
	"errors"
	"strings"
	"testing"
)

const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="1" errors="0" failures="1" time="12.3">
  <testsuite name="Kubernetes e2e suite" package="/" tests="5" disabled="1" skipped="1" errors="0" failures="1">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.2"></testcase>
    <testcase name="[ReportAfterSuite] Invariant Metrics" status="passed" time="0.1"></testcase>
    <testcase name="[It] [sig-node] Pods should get a host IP [NodeConformance] [Conformance]" status="passed" time="4.1"></testcase>
    <testcase name="[It] [sig-storage] EmptyDir volumes should support (root,0644,default) [NodeConformance] [Conformance]" status="failed" time="6.0">
      <failure message="pod &quot;x&quot; output: unexpected error&#xA;second line" type="failed">[FAILED] details</failure>
    </testcase>
    <testcase name="[sig-node] Probing container should be restarted [NodeConformance]" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
    <testcase name="[sig-node] no status attribute, failure element" time="1"><failure message="boom"></failure></testcase>
  </testsuite>
</testsuites>`

func TestSummarize(t *testing.T) {
	s, err := summarize(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	if s.passed != 1 || s.skipped != 1 || len(s.failed) != 2 || s.suiteNodes != 2 {
		t.Fatalf("passed %d skipped %d failed %d suite nodes %d, want 1 1 2 2", s.passed, s.skipped, len(s.failed), s.suiteNodes)
	}
	var out strings.Builder
	s.print(&out)
	want := `passed 1, failed 2, skipped 1
FAILED [sig-storage] EmptyDir volumes should support (root,0644,default) [NodeConformance] [Conformance]
    failed: pod "x" output: unexpected error
FAILED [sig-node] no status attribute, failure element
    failed: boom
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestSummarizeEmptyAndBroken(t *testing.T) {
	if _, err := summarize(strings.NewReader(`<testsuites></testsuites>`)); !errors.Is(err, ErrNoSpecs) {
		t.Errorf("empty report: err = %v, want ErrNoSpecs", err)
	}
	if _, err := summarize(strings.NewReader(`<testsuites><testcase name="x"`)); err == nil {
		t.Error("truncated report: no error")
	}
}
