// Command benchfleet measures `actorlet fleet` side by side with KWOK
// v0.8.0 on a real control plane (test/e2e/cluster.sh), one side at a time,
// each on a fresh control plane (up, measure, down):
//
//  1. N nodes to Ready;
//  2. M pods of a Deployment, bound by kube-scheduler to those nodes only
//     (a label and a taint), to Running;
//  3. a steady state held for S minutes, in which every Lease should be
//     renewed on time;
//  4. the pods' deletion (the Deployment scaled to 0) until none is left;
//  5. actorlet only: the same with a crash-looping and a probe-failing share
//     of the pods (KWOK only plays stages, it runs no containers).
//
// For each phase and side it records the wall time, the node process's CPU
// seconds (/proc/<pid>/stat utime+stime) and peak RSS (VmHWM of
// /proc/<pid>/status, reset through clear_refs at the start of each phase),
// the API server's requests (apiserver_request_total summed, difference
// across the phase), the Leases seen older than 40 s, the longest gap
// between two renewals of one Lease, the nodes that went NotReady after
// being Ready, and the load average. It prints a Markdown table of both
// sides. `make bench-fleet` runs it (FLEET_FLAGS passes flags); it is a
// benchmark, not part of `make test`.
//
// With -placement direct the harness creates the pods itself, bound to the
// nodes, and deletes them one by one; -direct-rate bounds how many a
// second (-delete-rate, the deletions on their own). Every 15 s of a phase's wait a progress line gives the phase's
// Leases seen older than 40 s so far and the node process's RSS, so a
// ramp shows at how many pods the first Lease went stale.
package main
