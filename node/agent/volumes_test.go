package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestVolumesOnTheSimulatedRuntime: an emptyDir and a hostPath are set up
// under <root>/pods/<uid> and passed to the runtime as mounts (with the
// termination message file); a configMap volume without an API server
// fails to mount, and the pod waits; a removed pod's directory goes, and so
// does an orphaned one found at start.
func TestVolumesOnTheSimulatedRuntime(t *testing.T) {
	e := newEnv(t)
	orphan := filepath.Join(e.root, "pods", "uid-gone", "volumes", "kubernetes.io~empty-dir", "x")
	if err := os.MkdirAll(orphan, 0o750); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(t.TempDir(), "shared")
	web := pod("web", corev1.RestartPolicyAlways)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	web.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "shared", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: host, Type: &dirOrCreate}}},
	}
	web.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "scratch", MountPath: "/scratch"},
		{Name: "shared", MountPath: "/shared", ReadOnly: true, SubPath: "sub"},
	}
	cfg := pod("cfg", corev1.RestartPolicyAlways)
	cfg.Spec.Volumes = []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
	a := e.start(web, cfg)
	defer a.Stop(t.Context())

	waitFor(t, "web Running", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-web")
		return ph == corev1.PodRunning, string(ph)
	})
	_, p := phaseOf(a, "uid-web")
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "actorlet-sim://")
	st, err := e.client.ContainerStatus(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	mounts := map[string]*runtimeapi.Mount{}
	for _, m := range st.GetMounts() {
		mounts[m.ContainerPath] = m
	}
	podDir := filepath.Join(e.root, "pods", "uid-web")
	if m := mounts["/scratch"]; m == nil || m.HostPath != filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "scratch") || m.Readonly {
		t.Errorf("emptyDir mount %v", m)
	}
	if m := mounts["/shared"]; m == nil || m.HostPath != filepath.Join(host, "sub") || !m.Readonly {
		t.Errorf("hostPath subPath mount %v", m)
	}
	if m := mounts["/dev/termination-log"]; m == nil || !strings.HasPrefix(m.HostPath, filepath.Join(podDir, "termination.app.")) {
		t.Errorf("termination message mount %v", m)
	}
	if fi, err := os.Stat(filepath.Join(host, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("the hostPath and its subPath were not created: %v", err)
	}
	waitFor(t, "the orphaned pod directory removed", func() (bool, string) {
		_, err := os.Stat(filepath.Join(e.root, "pods", "uid-gone"))
		return os.IsNotExist(err), fmt.Sprint(err)
	})

	// Without an API server the configMap cannot be read: no sandbox, a
	// FailedMount naming the volume.
	waitFor(t, "cfg waiting on its volume", func() (bool, string) {
		ph, _ := phaseOf(a, "uid-cfg")
		v, err := e.client.ListPod(context.Background(), "uid-cfg")
		if ph != corev1.PodPending || err != nil || !v.Empty() {
			return false, fmt.Sprintf("%s %v", ph, err)
		}
		stream, err := a.Journal().Load(context.Background(), "uid-cfg")
		if err != nil {
			return false, err.Error()
		}
		for _, env := range stream.Events {
			if f := env.GetEvent().GetSandboxFailed(); f != nil && f.Reason == "FailedMount" && strings.Contains(f.Message, `volume "conf"`) {
				return true, ""
			}
		}
		return false, "no SandboxFailed FailedMount naming the volume in the journal"
	})

	a.SetPods("test", []*corev1.Pod{cfg})
	waitFor(t, "web's pod directory removed with it", func() (bool, string) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	if _, err := os.Stat(host); err != nil {
		t.Errorf("the hostPath itself must stay: %v", err)
	}
	e.checkViolations()
}
