package sim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/actorlet/actorlet/cri/faults"
	"github.com/actorlet/actorlet/sim"
)

// Two nodes, 30 pods, ten virtual minutes of runtime faults and node
// crashes, then six quiet minutes; the same seed always gives the same run.
func Example() {
	plan, _ := faults.Preset("default")
	s, err := sim.New(sim.Options{Seed: 7, Nodes: 2, Pods: 30, Duration: 10 * time.Minute, Faults: plan, CrashEvery: 80})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	r, err := s.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("pods:", r.Created, "virtual:", r.Virtual, "violations:", len(r.Violations))
	fmt.Println("crashes:", r.Faults["node-crash"] > 0, "steps:", r.Steps)
	fmt.Println("digest:", r.Digest[:16])
	// Output:
	// pods: 30 virtual: 16m0s violations: 0
	// crashes: true steps: 888
	// digest: af2276372d0d5a81
}
