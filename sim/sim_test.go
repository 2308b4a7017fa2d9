package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri/faults"
)

func run(t *testing.T, opts Options) *Report {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSmoke(t *testing.T) {
	plan, _ := faults.Preset("default")
	r := run(t, Options{Seed: 1, Nodes: 2, Pods: 40, Duration: 10 * time.Minute, Faults: plan, CrashEvery: 100})
	r.Write(os.Stdout, "default")
}

func TestSmokeNoFaults(t *testing.T) {
	r := run(t, Options{Seed: 1, Nodes: 2, Pods: 40, Duration: 10 * time.Minute})
	r.Write(os.Stdout, "none")
}
