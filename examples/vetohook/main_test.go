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
const runEnv = "VETOHOOK_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// output is what the example printed: its pods' lines (phase, reason,
// message, waiting containers) by name, and its Warning events' lines
// (pod, reason, message).
type output struct {
	pods   map[string][]string
	events [][]string
}

func runExample(t *testing.T, args ...string) output {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--root-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("vetohook %v: %v\n%s", args, err, out.String())
	}
	o := output{pods: map[string][]string{}}
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "pod" && len(f) == 6:
			o.pods[f[1]] = f[2:]
		case f[0] == "event" && len(f) == 4:
			o.events = append(o.events, f[1:])
		default:
			t.Fatalf("line %q: want pod (name, phase, reason, message, waiting) or event (pod, reason, message)", line)
		}
	}
	return o
}

func hasEvent(o output, pod, reason, message string) bool {
	for _, e := range o.events {
		if e[0] == pod && e[1] == reason && e[2] == message {
			return true
		}
	}
	return false
}

// The pod carrying the label is Failed with the hook's reason and message
// in its status and a Warning event; the container named by the annotation
// waits with the hook's reason; the other pod and container run.
func TestVetoHookVetoesByLabel(t *testing.T) {
	o := runExample(t)
	if p := o.pods["web"]; p == nil || p[0] != "Running" || p[1] != "" || p[3] != "" {
		t.Fatalf("web: %q, want Running", p)
	}
	const msg = "pod carries the label example.com/veto=true: this node does not run it"
	if p := o.pods["labelled"]; p == nil || p[0] != "Failed" || p[1] != ReasonPod || p[2] != msg {
		t.Fatalf("labelled: %q, want Failed with reason %s and the hook's message", p, ReasonPod)
	}
	if !hasEvent(o, "labelled", ReasonPod, "lifecycle hook vetoed Accepted: "+msg) {
		t.Fatalf("no veto event for labelled in %q", o.events)
	}
	if p := o.pods["blocked"]; p == nil || p[0] != "Pending" || p[3] != "helper="+ReasonContainer {
		t.Fatalf("blocked: %q, want Pending with helper waiting %s (and app running)", p, ReasonContainer)
	}
	if !hasEvent(o, "blocked", ReasonContainer,
		"lifecycle hook vetoed BeforeStart of container helper: container helper is vetoed by the pod's annotation "+VetoContainer) {
		t.Fatalf("no veto event for blocked's helper in %q", o.events)
	}
	for _, e := range o.events {
		if e[0] == "web" {
			t.Fatalf("web has a warning: %q", e)
		}
	}
}

// With another label chosen, the labelled pod runs: its failure above came
// from the hook.
func TestVetoHookLetsOtherLabelsRun(t *testing.T) {
	o := runExample(t, "--label", "example.com/veto=no")
	if p := o.pods["labelled"]; p == nil || p[0] != "Running" {
		t.Fatalf("labelled: %q, want Running", p)
	}
}
