package sim

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/actorlet/actorlet/cri/faults"
)

func TestSweep(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SWEEP"))
	if n == 0 {
		t.Skip()
	}
	plan, _ := faults.Preset("default")
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := run(t, Options{Seed: seed, Nodes: 4, Pods: 150, Duration: 10 * time.Minute, Faults: plan, CrashEvery: 60})
		fmt.Println(seed, len(r.Violations), r.Wall, r.Faults["node-crash"], r.RetriedStarts, r.RuntimeMisuse)
		for _, v := range r.Violations {
			fmt.Println("  ", v)
		}
	}
}
