// Package podspec turns a pod's spec into what a CRI runtime is asked to
// run: the PodSandboxConfig of its sandbox (SandboxConfig: hostname, DNS,
// port mappings, log directory, cgroup parent, pod security context) and
// the ContainerConfig of each container attempt (ContainerConfig: image,
// command and args with $(VAR) expansion, environment, resources, OOM
// score, security context), with the pieces the kubelet computes for them:
// the container's environment (ContainerEnv: valueFrom, envFrom, the
// downward API), its mounts (ContainerMounts, TerminationMessageFile,
// EtcHostsMount) and the pod's cgroup (PodCgroupParent, RemovePodCgroup).
//
// It decides nothing about a pod's lifecycle (package actors/lifecycle
// does) and calls no runtime: the actors call it when they carry out a
// RunSandbox or CreateContainer effect. Its only I/O is reading what a
// config needs (the host's resolv.conf and /etc/hosts, ConfigMaps and
// Secrets through an EnvSource) and writing the per-container files the
// runtime mounts (termination message, /etc/hosts). Values read from
// Secrets go into the returned configs only, never anywhere durable.
package podspec
