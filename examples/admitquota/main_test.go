package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runEnv makes the test binary run the example (see TestMain), so the test
// needs no go build.
const runEnv = "ADMITQUOTA_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runExample runs the example in its own process and returns its pods'
// lines by name: widgets, phase, reason, message.
func runExample(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--root-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("admitquota %v: %v\n%s", args, err, out.String())
	}
	pods := map[string][]string{}
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("line %q: want name, widgets, phase, reason, message", line)
		}
		pods[f[0]] = f[1:]
	}
	return pods
}

// With a quota of 3 widgets, the pods asking for 2 and 1 run, and the one
// asking for 2 more is rejected: Failed, with the handler's reason and
// message in its status.
func TestAdmitQuotaRejectsByTheCustomResource(t *testing.T) {
	pods := runExample(t, "--quota", "3")
	for _, name := range []string{"small", "medium"} {
		if p := pods[name]; p == nil || p[1] != "Running" || p[2] != "" {
			t.Fatalf("%s: %q, want Running", name, p)
		}
	}
	large := pods["large"]
	if large == nil || large[1] != "Failed" || large[2] != Reason ||
		large[3] != "Node didn't have enough resource: example.com/widget, requested: 2, used: 3, capacity: 3 (node-local quota)" {
		t.Fatalf("large: %q, want Failed with reason %s and the quota's message", large, Reason)
	}
}

// With room for all, all run: the rejection above came from the quota.
func TestAdmitQuotaAdmitsWithinTheQuota(t *testing.T) {
	for name, p := range runExample(t, "--quota", "5") {
		if p[1] != "Running" {
			t.Fatalf("%s: %q, want Running", name, p)
		}
	}
}
