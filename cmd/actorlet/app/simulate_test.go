package app

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func runSimulate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"simulate"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

var digestLine = regexp.MustCompile(`(?m)\Adigest=[0-9a-f]{64} violations=0\z`)

// The command with the default faults and node crashes on fixed seeds,
// each run twice (--check-determinism): no violation, the same digest, and
// the report's last line.
func TestSimulateCommandSeeds(t *testing.T) {
	digests := map[string]string{}
	for _, seed := range []string{"11", "12"} {
		out, err := runSimulate(t, "--seed", seed, "--nodes", "3", "--pods", "50", "--duration", "5m", "--faults", "default", "--check-determinism")
		if err != nil {
			t.Fatalf("seed %s: %v\n%s", seed, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		if !digestLine.MatchString(last) {
			t.Errorf("seed %s: last line %q, want digest=<hex> violations=0", seed, last)
		}
		for _, want := range []string{"pods run: 50", "node-crash=", "invariant checks: ", "virtual time: 11m0s", "determinism: a second run gave the same digest"} {
			if !strings.Contains(out, want) {
				t.Errorf("seed %s: report lacks %q:\n%s", seed, want, out)
			}
		}
		digests[last] = seed
	}
	if len(digests) != 2 {
		t.Errorf("two seeds gave the same digest: %v", digests)
	}
}

func TestSimulateCommandBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "0"}, "--nodes 0"},
		{[]string{"--faults", "/nonexistent/plan.yaml"}, "--faults"},
		{[]string{"--duration", "-1m"}, "--duration"},
	} {
		_, err := runSimulate(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
		if errors.Is(err, errViolations) {
			t.Errorf("%v: reported as violations", tc.args)
		}
	}
}
