// Package bench holds actorlet's end-to-end benchmarks: whole agents
// (durable journal with fsync, actors, runtime watcher) on the in-process
// simulated runtime (cri/sim). It has no API; everything is in its test
// files.
//
//   - BenchmarkPodsToRunning: 1,000 pods from SetPods to all Running
//     (pods/s).
//   - BenchmarkRecover10k: restart of an agent that runs 10,000 pods:
//     journal replay, one runtime listing and 10,000 actors (recover-ms;
//     target < 1,000 ms).
//   - BenchmarkMemoryPerPod: live heap per running pod (bytes/pod, and
//     bytes/pod-actorlet without the simulated runtime's share; target
//     < 10 KiB).
//
// One iteration is a whole scenario, so run them with -benchtime=1x:
//
//	go test -run '^$' -bench . -benchtime=1x -timeout 30m ./test/bench/ | go run ./test/benchtable
//
// Every wait has a deadline; a scenario that does not finish in time fails
// the benchmark instead of hanging.
package bench
