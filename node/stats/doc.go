// Package stats builds the kubelet's stats Summary (k8s.io/kubelet/pkg/apis/stats/v1alpha1,
// served at /stats/summary and read by eviction) and the /metrics/resource collector, from the
// container runtime (CRI stats calls) and the host (/proc, the cgroup root, statfs).
//
// # Sources
//
//   - node.cpu: the root cgroup's CPU time (cgroup v2 cpu.stat usage_usec, v1
//     cpuacct.usage), else the busy time of /proc/stat's "cpu" line.
//   - node.memory: usage and inactive_file of the root cgroup (v1 memory.usage_in_bytes and
//     memory.stat; v2, whose root has no memory.current, MemTotal-MemFree of /proc/meminfo
//     and the root memory.stat); workingSet = usage - inactive_file, available =
//     MemTotal - workingSet, as the kubelet computes them.
//   - node.fs: statfs of Options.RootDir. node.runtime.imageFs: the CRI's ImageFsInfo, with
//     capacity from statfs of its mountpoint when this host can reach it (else nil).
//   - node.rlimit: maxpid from /proc/sys/kernel/pid_max; curproc the tasks counted in
//     /proc/loadavg (each thread holds a PID), else the process directories of /proc.
//   - pods: the newest sandbox of each pod labelled io.actorlet.managed=true, its RUNNING
//     containers, CPU and memory from ListPodSandboxStats (pod level) and the container stats
//     it embeds; if the runtime does not serve ListPodSandboxStats (Unimplemented), from
//     ListContainerStats, the pod figures being the sums over its containers.
//
// usageNanoCores is the runtime's when it gives a non-zero one, else the rate between the
// last two samples of usageCoreNanoSeconds of the same container, pod or node (nil on the
// first sample). Samples are cached per ID and forgotten 5 minutes after they were last seen.
package stats
