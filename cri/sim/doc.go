// Package sim is actorlet's simulated container runtime: a complete
// in-memory implementation of the CRI v1 RuntimeService and ImageService
// (k8s.io/cri-api), for simulation harnesses with many simulated nodes in
// one process (in the spirit of KWOK and kubemark) and for crash testing
// actorlet. It is not a mock: it keeps CRI semantics, records misuse, and
// costs about 1.4 KB of heap and no goroutine per running pod of one
// container: its records of the sandbox and the container, which hold
// what the requests gave as plain values, not as the requests' messages
// (see records.go; BenchmarkHeapPerPod measures it, and test/bench's
// BenchmarkMemoryPerPod reports its share of an agent's pods).
//
// # Use
//
//	rt, _ := sim.New(sim.Options{Latency: map[string]time.Duration{"RunPodSandbox": 50 * time.Millisecond}})
//	go sim.Serve(ctx, "unix:///run/actorlet-sim/cri.sock", rt) // a real socket, or
//	conn, stop := sim.Direct(rt, nil)                          // "sim://": function calls, or
//	conn, stop, _ := sim.InProcess(ctx, rt)                    // gRPC over an in-memory pipe
//
// # Semantics (containerd 2.x unless noted)
//
//   - Sandboxes get random 64-hex IDs and an IP from Options.PodCIDR
//     (hostNetwork sandboxes report Options.HostIP). StopPodSandbox kills
//     the sandbox's running containers (exit 137, "Error"), makes it
//     NOTREADY and returns its IP to the pool, as the CRI asks ("reclaims
//     network resources"); PodSandboxStatus keeps reporting the old IP.
//     Stop and Remove are idempotent and succeed for unknown IDs.
//   - Sandbox and container names (metadata incl. attempt) are reserved
//     while the object exists: a second RunPodSandbox or CreateContainer
//     with the same metadata fails with AlreadyExists.
//   - A pod annotated with AnnotationRunPodSandboxError (its value is the
//     message) never gets a sandbox: RunPodSandbox fails with Unknown.
//   - Containers follow CREATED → RUNNING → EXITED. Their process is
//     scripted by environment variables (EnvExitAfter, EnvExitCode,
//     EnvExitReason, EnvStopExitCode, EnvStopDelay, EnvExecExitCode,
//     EnvCatFiles, which prints files from the container's mounts to its
//     log at start, and the probe endpoints below).
//     RemoveContainer kills a running container first.
//   - Events (GetContainerEvents) carry the sandbox status and all its
//     container statuses; sandboxes emit events under their own ID. The
//     sandbox's DELETED event carries its last status (containerd sends
//     none, having already forgotten the sandbox).
//   - Images are identified by "sha256:" + hex(sha256(normalised name));
//     references are normalised like Docker's ("busybox" is
//     "docker.io/library/busybox:latest"). A reference containing
//     "notfound" fails to pull with NotFound.
//   - Every reply is made for its call: it shares no message, list, map or
//     bytes with the runtime's records or with another reply, so a caller
//     may keep or change it (Direct hands replies over without a copy;
//     TestRepliesShareNothing).
//   - ExecSync runs nothing: it answers SIM_EXEC_EXIT_CODE.
//     Exec, Attach, PortForward and the checkpoint/restore RPCs answer
//     Unimplemented. Stats are synthetic (see Resource usage); no
//     metrics are exported.
//
// # Probe endpoints
//
// So that HTTP and TCP probes can be tested without containerd, a running
// container whose env has SIM_HTTP_PORT serves HTTP on <sandbox IP>:port,
// answering every request with SIM_HTTP_STATUS (default 200) and
// SIM_HTTP_BODY; SIM_TCP_PORT accepts TCP connections. The status can be
// changed while the container runs: write it to the file named by
// SIM_HTTP_STATUS_FILE (re-read per request; works when the runtime runs
// inside another process), or call Runtime.SetHTTPStatus in-process.
//
//	rt, _ := sim.New(sim.Options{PodCIDR: "127.88.0.0/16"})
//	// container env: SIM_HTTP_PORT=8080 SIM_HTTP_STATUS=200 SIM_TCP_PORT=9000
//	// GET http://<pod IP>:8080/ answers 200 while the container runs.
//
// Ports are served only when the sandbox IP is a loopback address: a
// PodCIDR in 127.0.0.0/8 (Linux routes all of it to lo, so no interface
// is set up), or a hostNetwork sandbox with a loopback HostIP (which
// shares that address with other nodes of the process). With any other
// IP the variables are ignored, and that is logged once per container
// start. The listeners close when the container exits, is removed, or its
// sandbox stops (before those RPCs return; after a scripted exit,
// promptly), and when the Runtime is closed. A serving container costs two
// goroutines. See probeserve.go.
//
// # Resource usage
//
// ContainerStats and ListContainerStats report what a running container's
// env asks for: SIM_CPU_MILLICORES (default 1) is its CPU rate, given as
// usage_nano_cores, and usage_core_nano_seconds grows by that rate on
// Options.Clock from started_at; SIM_MEMORY_BYTES is its working set,
// usage and RSS (default 8 MiB working set and usage, 4 MiB RSS). An
// exited container keeps its CPU time and reports no memory. Tests change
// both while the container runs with Runtime.SetUsage (in-process only):
// CPU time already used is kept.
//
//	// container env: SIM_CPU_MILLICORES=250 SIM_MEMORY_BYTES=104857600
//	rt.SetUsage(id, 2000, 1<<30) // now 2 cores and 1 GiB
//
// PodSandboxStats and ListPodSandboxStats (READY sandboxes only) are the
// sums over the sandbox's running containers, taken at the same instant
// as the container stats they embed. Writable layers (4 KiB and one inode
// each) are on the image filesystem: their fs_id is ImageFsMountpoint,
// which ImageFsInfo reports.
//
// # Misuse
//
// Calls a correct client never makes are refused as a real runtime would
// and recorded in Info.Violations (Status with verbose=true, key InfoKey):
// starting a container that is not CREATED, starting or creating a
// container in a NOTREADY sandbox, and a second READY sandbox for one pod.
//
// # Faults
//
// Options.Faults takes a seeded fault plan (package cri/faults): errors
// with chosen gRPC codes before or after a call takes effect, hangs until
// the caller gives up, latency distributions, dropped, duplicated and
// reordered events, broken event streams and restarts. They are injected
// around the runtime, into the calls Serve and InProcess serve, so its
// CRI semantics and misuse records stay as they are; a retry after a lost
// reply that misuses the CRI is recorded like any other misuse. Restarts
// act on the state as Runtime.Restart says: keep (containerd restarted),
// reboot (the machine rebooted) or wipe (state lost). Info.Faults and
// Runtime.Faults count what was injected.
//
//	plan, _ := faults.Load("default") // or a file
//	rt, _ := sim.New(sim.Options{Faults: plan, FaultSeed: 42})
//
// # Time
//
// All delays (Options.Latency, container exits, stop grace periods) run on
// Options.Clock, so tests drive them with a FakeClock. Timestamps are
// taken from the same clock; an exit's finished_at is the exact scheduled
// time.
package sim
