package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri/sim"
)

// faultSeed is the seed of the injected faults: ACTORLET_E2E_SEED when
// set (to replay), else the clock's. It is logged.
func faultSeed(t *testing.T) string {
	seed := os.Getenv("ACTORLET_E2E_SEED")
	if _, err := strconv.ParseUint(seed, 10, 64); err != nil {
		seed = strconv.FormatUint(uint64(time.Now().UnixNano()), 10)
	}
	t.Logf("fault seed %s (ACTORLET_E2E_SEED to replay)", seed)
	return seed
}

// criProxy is `actorlet cri-proxy` on a socket in dir.
type criProxy struct {
	*proc
	endpoint, metrics string
}

func startCRIProxy(t *testing.T, dir, upstream string, extra ...string) *criProxy {
	t.Helper()
	endpoint := "unix://" + filepath.Join(dir, "proxy.sock")
	p := startProc(t, "cri-proxy", append([]string{"cri-proxy", "--listen", endpoint, "--upstream", upstream,
		"--metrics-address", "127.0.0.1:0"}, extra...)...)
	m := p.waitLog("serving metrics")
	p.waitLog("cri-proxy serving")
	return &criProxy{proc: p, endpoint: endpoint, metrics: "http://" + m["address"].(string) + "/metrics"}
}

// stopReport stops the proxy with SIGTERM and returns the faults its last
// log line reports, by kind.
func (p *criProxy) stopReport(t *testing.T) map[string]float64 {
	t.Helper()
	p.stop()
	lines := strings.Split(strings.TrimSpace(p.output()), "\n")
	var last struct {
		Msg    string             `json:"msg"`
		Faults map[string]float64 `json:"faults"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Msg != "cri-proxy stopped" {
		t.Fatalf("last line of cri-proxy: %q (%v), want its report", lines[len(lines)-1], err)
	}
	return last.Faults
}

// info reads the simulated runtime's Info (verbose Status).
func (s *simRuntime) info(t *testing.T) (sim.Info, error) {
	t.Helper()
	st, err := s.client.Status(context.Background(), true)
	if err != nil {
		return sim.Info{}, err
	}
	var info sim.Info
	if err := json.Unmarshal([]byte(st.GetInfo()[sim.InfoKey]), &info); err != nil {
		t.Fatalf("decode sim info: %v", err)
	}
	return info, nil
}

// TestFaultsChurnThroughCRIProxy is the kill -9 churn (TestCrashRecoveryKill9:
// adds, removals, crashing containers, actorlet killed with SIGKILL at random
// journal points) with `actorlet cri-proxy --faults default` between actorlet
// and `actorlet sim-runtime`: errors, lost replies, hangs, latency, lost,
// duplicated and reordered events, broken streams and runtime outages. The
// oracle looks at the runtime directly, past the proxy: after every restart
// exactly one ready sandbox per desired pod and nothing else, steady
// containers kept, restart counts never going down, no CRI misuse (no second
// start of a container, no second ready sandbox); at the end nothing left.
func TestFaultsChurnThroughCRIProxy(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t, dir)
	px := startCRIProxy(t, dir, s.endpoint, "--faults", "default", "--seed", faultSeed(t))
	runChurn(t, churnRuntime{
		endpoint: px.endpoint, client: s.client, misuse: s.violations,
		manifest: func(name string, crash bool) string {
			if crash {
				return podManifest(name, map[string]string{"SIM_EXIT_AFTER": "100ms", "SIM_EXIT_CODE": "1"})
			}
			return podManifest(name, nil)
		},
		// A hung call is given up after 5 s, not the default 2 min.
		extra: []string{"--runtime-request-timeout", "5s"},
	}, newNodeDirs(t), 5)

	metrics, err := httpGet(px.metrics)
	if err != nil || !strings.Contains(metrics, `actorlet_cri_faults_injected_total{kind="error"`) {
		t.Fatalf("cri-proxy metrics: %v\n%s", err, metrics)
	}
	report := px.stopReport(t)
	t.Logf("faults injected: %v", report)
	// Hundreds of calls at the default rates: none of these can be zero
	// but by a broken injector.
	for _, kind := range []string{"error", "latency"} {
		if report[kind] == 0 {
			t.Errorf("no %s faults injected: %v", kind, report)
		}
	}
}

// TestFaultsSimRuntimeRestarts: `actorlet sim-runtime --faults FILE` restarts
// once, at a chosen call, in each state-losing mode: reboot (containers
// exited 255 Unknown, sandboxes NOTREADY, as containerd after a machine
// reboot) and wipe (the runtime's state lost), with event faults all along.
// actorlet must bring every pod back with one ready sandbox, remove what the
// restart left dead, start nothing twice, and leave nothing behind after the
// pods are removed.
func TestFaultsSimRuntimeRestarts(t *testing.T) {
	for _, mode := range []string{"reboot", "wipe"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			plan := filepath.Join(dir, "faults.yaml")
			// Call 150 comes after the pods started (a few dozen calls) and
			// before the crash loop has gone on for long.
			body := fmt.Sprintf("events: {drop: 0.05, duplicate: 0.05, reorder: 0.05, reorderWindow: 200ms, break: 0.01}\n"+
				"restart: {mode: %s, atCalls: [150], downtime: 500ms}\n", mode)
			if err := os.WriteFile(plan, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startSim(t, dir, "--faults", plan, "--seed", faultSeed(t))
			d := newNodeDirs(t)
			desired := map[string]bool{"a": false, "b": false, "c": false, "crashy": true}
			for name, crash := range desired {
				env := map[string]string(nil)
				if crash {
					env = map[string]string{"SIM_EXIT_AFTER": "100ms", "SIM_EXIT_CODE": "1"}
				}
				writeManifest(t, d.manifests, name+".yaml", podManifest(name, env))
			}
			// The oracle's own calls go through the faults too: it retries.
			misuse := func(t *testing.T) []string {
				var in sim.Info
				waitFor(t, "the simulated runtime's info", func() (bool, string) {
					var err error
					in, err = s.info(t)
					return err == nil, fmt.Sprint(err)
				})
				return in.Violations
			}
			rt := churnRuntime{endpoint: s.endpoint, client: s.client, misuse: misuse}
			n := startNode(t, s.endpoint, d)
			waitFor(t, "the runtime's restart", func() (bool, string) {
				in, err := s.info(t)
				return err == nil && in.Restarts == 1, fmt.Sprint(in.Restarts, err)
			})
			checkConverged(t, rt, d, n, desired, &seenState{containers: map[string]string{}, restarts: map[string]int32{}})
			for name := range desired {
				if err := os.Remove(filepath.Join(d.manifests, name+".yaml")); err != nil {
					t.Fatal(err)
				}
			}
			checkConverged(t, rt, d, n, map[string]bool{}, &seenState{containers: map[string]string{}, restarts: map[string]int32{}})
			n.stop()
			in, err := s.info(t)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("faults injected: %v", in.Faults)
			if in.Faults["restart"] != 1 {
				t.Fatalf("restarts counted: %v", in.Faults)
			}
		})
	}
}
