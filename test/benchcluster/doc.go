// Package benchcluster compares actorlet with the upstream kubelet v1.37.2 as
// members of the same real cluster (the kube-apiserver of
// test/e2e/cluster.sh), each on its own simulated CRI runtime served over a
// unix socket by `actorlet sim-runtime` (same binary, same settings: a
// separate process per node, as a runtime is never shared by two nodes).
//
// For each node in turn, one round:
//
//   - Running: the time from the first create of N pods bound to the node
//     (spec.nodeName, created by 20 concurrent admin clients) until the API
//     server reports the last of them in phase Running, as seen by a watch;
//   - deleted: the time from the first graceful delete of those pods until
//     the last of them is gone from the API server (the node stopped its
//     containers and deleted the object with grace 0).
//
// Both nodes run with their defaults (API QPS 50, burst 100; actorlet's
// status writer, the kubelet's status manager and PLEG). The kubelet runs
// as it must here: as user nobody in a user namespace (setpriv + unshare,
// feature gate KubeletInUserNamespace), with its /var/lib and /var/log
// bind-mounted from the benchmark's directory, so that it never writes the
// host's sysctls; cgroupsPerQOS and node allocatable enforcement are off.
//
// It needs the cluster of test/e2e/cluster.sh with the kubelet built:
//
//	make bench-cluster
//
// or, with the cluster already up:
//
//	test/e2e/cluster.sh install kubelet
//	set -a; . /tmp/actorlet-cluster/env; set +a
//	go test -run '^$' -bench . -benchtime=1x -timeout 30m ./test/benchcluster/
//
// ACTORLET_BENCH_PODS sets N (default 100), ACTORLET_BENCH_ROUNDS the rounds
// (default 1; the order of the two nodes alternates round by round), and
// ACTORLET_BENCH_SIM_LATENCY the runtimes' per-RPC latency (sim-runtime's
// --latency, e.g. RunPodSandbox=50ms); ACTORLET_BENCH_KEEP=1 keeps its directory
// with the logs of both nodes and runtimes. It prints a table; the target
// (actorlet at least 2x faster) is reported, never enforced.
package benchcluster
