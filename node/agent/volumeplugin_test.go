package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/volumes"
)

// countingPlugin counts its calls by volume directory.
type countingPlugin struct {
	mu        sync.Mutex
	setUps    map[string]int
	tearDowns map[string]int
}

func (p *countingPlugin) SetUp(_ context.Context, v *volumes.InlineVolume) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setUps[v.Dir]++
	return os.WriteFile(filepath.Join(v.Dir, "greeting"), []byte(v.Attributes["greeting"]), 0o644)
}

func (p *countingPlugin) TearDown(_ context.Context, v *volumes.InlineVolume) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tearDowns[v.Dir]++
	return nil
}

func (p *countingPlugin) counts() (setUps, tearDowns map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, t := map[string]int{}, map[string]int{}
	for k, v := range p.setUps {
		s[k] = v
	}
	for k, v := range p.tearDowns {
		t[k] = v
	}
	return s, t
}

// TestVolumePluginSetUpOnceTornDownWithThePod: a crash-looping container
// is created again and again, and the node restarts, but the plugin sets
// its volume up once; the container mounts the plugin's directory; the
// pod's removal tears it down once and removes the pod's directory.
func TestVolumePluginSetUpOnceTornDownWithThePod(t *testing.T) {
	e := newEnv(t)
	plugin := &countingPlugin{setUps: map[string]int{}, tearDowns: map[string]int{}}
	with := []agent.Option{agent.WithVolumePlugin("files.example.com", plugin)}
	p := pod("files", corev1.RestartPolicyAlways, corev1.EnvVar{Name: sim.EnvExitAfter, Value: "0s"})
	p.Spec.Volumes = []corev1.Volume{{Name: "files", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "files.example.com", VolumeAttributes: map[string]string{"greeting": "hi"}}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "files", MountPath: "/data"}}
	dir := filepath.Join(e.root, "pods", "uid-files", "volumes", "kubernetes.io~csi", "files", "mount")

	a := e.startExt(with, p)
	waitFor(t, "the container restarted twice", func() (bool, string) {
		_, st := phaseOf(a, "uid-files")
		if st == nil || len(st.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		n := st.Status.ContainerStatuses[0].RestartCount
		return n >= 2, fmt.Sprint("restarts ", n)
	})
	if err := a.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	a = e.startExt(with, p)
	defer a.Stop(t.Context())
	waitFor(t, "the container restarted after the node's restart", func() (bool, string) {
		_, st := phaseOf(a, "uid-files")
		if st == nil || len(st.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		n := st.Status.ContainerStatuses[0].RestartCount
		return n >= 4, fmt.Sprint("restarts ", n)
	})
	if got, err := os.ReadFile(filepath.Join(dir, "greeting")); err != nil || string(got) != "hi" {
		t.Errorf("the volume's file: %q, %v", got, err)
	}
	_, st := phaseOf(a, "uid-files")
	cs, err := e.client.ListPod(context.Background(), "uid-files")
	if err != nil || len(cs.Containers) == 0 {
		t.Fatalf("ListPod: %v, %v", cs, err)
	}
	status, err := e.client.ContainerStatus(context.Background(), cs.Containers[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	mounted := false
	for _, m := range status.GetMounts() {
		mounted = mounted || (m.ContainerPath == "/data" && m.HostPath == dir)
	}
	if !mounted {
		t.Errorf("mounts %v: want %s at /data (status %v)", status.GetMounts(), dir, st.Status.Phase)
	}

	a.SetPods("test", nil)
	waitFor(t, "the pod's directory removed", func() (bool, string) {
		_, err := os.Stat(filepath.Join(e.root, "pods", "uid-files"))
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	setUps, tearDowns := plugin.counts()
	if setUps[dir] != 1 || tearDowns[dir] != 1 || len(setUps) != 1 || len(tearDowns) != 1 {
		t.Errorf("SetUp calls %v, TearDown calls %v: want one each for %s", setUps, tearDowns, dir)
	}
}
