package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// cgroupRootE2E is the cgroup root of the cgroups-per-QoS test, apart from
// any kubelet's /kubepods; env.sh down removes what a crash leaves there.
const cgroupRootE2E = "/actorlet-e2e"

// TestContainerdCgroupsPerQOS: with --cgroups-per-qos, a pod's containers
// run under <root>/kubepods/<qos>/pod<uid> (cgroupfs), their memory limit
// is set there, and the pod's cgroup goes with the pod.
func TestContainerdCgroupsPerQOS(t *testing.T) {
	e := needContainerd(t)
	d := e.nodeDirs(t, "ctrd-qos")
	writeManifest(t, d.manifests, "burst.yaml", e.manifest(podSpec{name: "burst", containers: []containerSpec{
		{name: "app", args: []string{"-msg", "burst up"}, extra: "    resources: {requests: {memory: 16Mi}, limits: {memory: 48Mi}}\n"},
	}}))
	n := startNode(t, e.endpoint, d, "--cgroups-per-qos", "--cgroup-root", cgroupRootE2E)
	var p corev1.Pod
	waitFor(t, "burst Running", func() (bool, string) {
		p = n.pods(t)["default/burst-"+d.name]
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	parent := fmt.Sprintf("%s/kubepods/burstable/pod%s", cgroupRootE2E, p.UID)
	spec := runtimeSpec(t, e.crictlOut(t, "inspect", containerID(t, p, "app")))
	if !strings.HasPrefix(spec.Linux.CgroupsPath, parent+"/") {
		t.Fatalf("the container's cgroupsPath %q is not under %s", spec.Linux.CgroupsPath, parent)
	}
	memDir := filepath.Join("/sys/fs/cgroup/memory", spec.Linux.CgroupsPath) // cgroup v1
	limitFile := "memory.limit_in_bytes"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil { // cgroup v2
		memDir, limitFile = filepath.Join("/sys/fs/cgroup", spec.Linux.CgroupsPath), "memory.max"
	}
	if b, err := os.ReadFile(filepath.Join(memDir, limitFile)); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(48<<20) {
		t.Fatalf("memory limit in %s: %q, %v", memDir, b, err)
	}
	podDir := filepath.Dir(memDir)
	removeManifest(t, d.manifests, "burst.yaml")
	waitFor(t, "the pod's cgroup removed with it", func() (bool, string) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}
