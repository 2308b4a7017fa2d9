package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"sigs.k8s.io/yaml"
)

func TestPresetsParse(t *testing.T) {
	names := PresetNames()
	if strings.Join(names, ",") != "default,none" {
		t.Fatalf("presets %v, want default and none", names)
	}
	none, err := Preset("none")
	if err != nil || !none.Empty() {
		t.Fatalf("none: %+v, %v; want an empty plan", none, err)
	}
	def, err := Preset("default")
	if err != nil {
		t.Fatal(err)
	}
	if def.Empty() {
		t.Fatal("default preset injects nothing")
	}
	// Every kind of fault is in the default plan, and its restarts suit a proxy.
	any, pull := def.For("ListContainers"), def.For("PullImage")
	for name, v := range map[string]float64{
		"error": any.Error, "errorAfter": any.ErrorAfter, "hang": any.Hang, "hangAfter": any.HangAfter,
		"latency": any.Latency.rate(), "pull error": pull.Error, "drop": def.Events.Drop, "duplicate": def.Events.Duplicate,
		"reorder": def.Events.Reorder, "break": def.Events.Break, "restart": def.Restart.Rate,
	} {
		if v <= 0 {
			t.Errorf("default preset: %s rate is %g", name, v)
		}
	}
	if def.Restart.Mode.orKeep() != RestartKeep {
		t.Errorf("default preset restarts in mode %q; a proxy can only do %q", def.Restart.Mode, RestartKeep)
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "default, none") {
		t.Errorf("unknown preset: %v, want an error naming the presets", err)
	}
}

// TestPlanRoundTrip: a plan written back as YAML reads the same.
func TestPlanRoundTrip(t *testing.T) {
	def, _ := Preset("default")
	b, err := yaml.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("re-reading\n%s: %v", b, err)
	}
	b2, _ := yaml.Marshal(again)
	if string(b) != string(b2) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", b, b2)
	}
	if got := again.For("PullImage").Codes; len(got) != 3 || codes.Code(got[0]) != codes.Unavailable {
		t.Fatalf("PullImage codes after round trip: %v", got)
	}
	if got := time.Duration(again.Events.ReorderWindow); got != 500*time.Millisecond {
		t.Fatalf("reorderWindow after round trip: %v", got)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`rpcs: {RunPodSandBox: {error: 0.1, codes: [Internal]}}`, `unknown CRI method "RunPodSandBox"`},
		{`rpcs: {"*": {error: 1.5, codes: [Internal]}}`, `rpcs.*: error: rate 1.5 is not in [0, 1]`},
		{`rpcs: {"*": {error: 0.6, hang: 0.6, codes: [Internal]}}`, `sum must be at most 1`},
		{`rpcs: {"*": {error: 0.1}}`, `codes: required`},
		{`rpcs: {"*": {error: 0.1, codes: [OK]}}`, `OK is not an error`},
		{`rpcs: {"*": {error: 0.1, codes: [Unavalable]}}`, `unknown gRPC code "Unavalable"`},
		{`rpcs: {"*": {latency: {distribution: gamma}}}`, `distribution "gamma"`},
		{`rpcs: {"*": {latency: {median: 1ms}}}`, `distribution: required`},
		{`rpcs: {"*": {latency: {distribution: lognormal, sigma: 1}}}`, `median must be positive`},
		{`rpcs: {"*": {latency: {distribution: uniform, min: 2s, max: 1s}}}`, `max 1s is below min 2s`},
		{`rpcs: {"*": {latency: {distribution: fixed, value: 10}}}`, `want a duration string`},
		{`rpcs: {"*": {latency: {distribution: fixed, value: 10 parsecs}}}`, `duration "10 parsecs"`},
		{`events: {drop: 0.5, break: 0.6}`, `events: drop+duplicate+reorder+break is 1.1`},
		{`restart: {rate: 0.1, mode: crash}`, `restart: mode "crash"`},
		{`restart: {rate: 0.1, downtime: -1s}`, `downtime -1s is negative`},
		{`restrat: {rate: 0.1}`, `unknown field "restrat"`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s): %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestParseAcceptsCodeSpellings(t *testing.T) {
	p, err := Parse([]byte(`{"rpcs": {"StartContainer": {"error": 0.5, "codes": ["DEADLINE_EXCEEDED", "unavailable", "ResourceExhausted"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := p.For("StartContainer").Codes
	want := []codes.Code{codes.DeadlineExceeded, codes.Unavailable, codes.ResourceExhausted}
	for i := range want {
		if codes.Code(got[i]) != want[i] {
			t.Fatalf("codes %v, want %v", got, want)
		}
	}
	if p.For("StopContainer").Error != 0 {
		t.Fatal("a method without an entry and no \"*\" got faults")
	}
}

func TestLoad(t *testing.T) {
	p, err := Load("default")
	if err != nil || p.Empty() {
		t.Fatalf("Load(default): %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(file, []byte("restart: {rate: 0.5, mode: wipe, downtime: 2s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = Load(file)
	if err != nil || p.Restart.Mode != RestartWipe || time.Duration(p.Restart.Downtime) != 2*time.Second {
		t.Fatalf("Load(%s): %+v, %v", file, p, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("events: {drop: 2}\n"), 0o600)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "events: drop") {
		t.Fatalf("Load(bad file): %v, want an error naming the file and the field", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "neither a preset") {
		t.Fatalf("Load(missing): %v", err)
	}
}

// TestREADMEPlanParses: the example plan in the README's "Faults on
// demand" is a valid plan.
func TestREADMEPlanParses(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Faults on demand")
	if !ok {
		t.Fatal("README has no section \"Faults on demand\"")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in the README's faults section")
	}
	block, _, _ = strings.Cut(block, "```")
	p, err := Parse([]byte(block))
	if err != nil {
		t.Fatalf("the README's plan: %v\n%s", err, block)
	}
	if p.For("PullImage").Latency.Distribution != Uniform || len(p.Restart.AtCalls) != 1 {
		t.Fatalf("the README's plan read as %+v", p)
	}
}
