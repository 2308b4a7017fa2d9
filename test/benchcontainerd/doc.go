// Package benchcontainerd measures pod startup on containerd: actorlet
// (embedded, with its durable journal) next to the bare CRI calls a pod needs
// (RunPodSandbox, CreateContainer, StartContainer, issued directly with the
// same configs), in the same run on the same containerd.
//
// A pod's startup latency is the time from the moment actorlet is handed the
// pod (the embedded source's SetPods, as a manifest or an API watch would
// hand it over) to its containers running as actorlet's status reports it;
// for the bare calls, from the first call to StartContainer's return. Two
// shapes, 30 pods each: "burst" hands all pods over at once (30 goroutines
// for the bare calls), "serial" one at a time, each after the previous runs.
// Bare and actorlet pods share the containerd at once: in serial rounds they
// alternate pod by pod (which goes first alternates too), so both meet the
// same number of running containers; burst rounds alternate which goes
// first. The bare sandboxes lack actorlet's managed label, so the node
// leaves them alone. ACTORLET_BENCH_ROUNDS sets the rounds (default 2);
// the percentiles pool all rounds; ACTORLET_BENCH_SHAPES=serial runs one
// shape only.
//
// It needs the containerd of test/e2e/env.sh:
//
//	make bench-containerd
//
// or, with an environment already up:
//
//	set -a; . /tmp/actorlet-e2e/env; set +a
//	go test -run '^$' -bench . -benchtime=1x ./test/benchcontainerd/
//
// It prints a table; the target (actorlet's overhead under 10 %) is
// reported, never enforced.
package benchcontainerd
