package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// fakePlugin writes one file per attribute into the volume's directory and
// records every call; setUpErr and tearDownErr, when set, fail those calls.
type fakePlugin struct {
	mu          sync.Mutex
	setUps      []InlineVolume
	tearDowns   []InlineVolume
	refreshes   []InlineVolume
	setUpErr    error
	tearDownErr error
}

func (f *fakePlugin) SetUp(_ context.Context, v *InlineVolume) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setUps = append(f.setUps, *v)
	if f.setUpErr != nil {
		return f.setUpErr
	}
	for k, val := range v.Attributes {
		if err := os.WriteFile(filepath.Join(v.Dir, k), []byte(val), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakePlugin) TearDown(_ context.Context, v *InlineVolume) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tearDowns = append(f.tearDowns, *v)
	return f.tearDownErr
}

func (f *fakePlugin) counts() (setUps, tearDowns int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.setUps), len(f.tearDowns)
}

// refreshingPlugin is a fakePlugin that is also a Refresher.
type refreshingPlugin struct{ *fakePlugin }

func (r refreshingPlugin) Refresh(_ context.Context, v *InlineVolume) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshes = append(r.refreshes, *v)
	return nil
}

const testDriver = "files.example.com"

func inlineVolume(name, driver string, attrs map[string]string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: driver, VolumeAttributes: attrs, ReadOnly: ptr(true), FSType: ptr("ext4"),
	}}}
}

// withPlugins makes a Manager on e's root and fakes with plugins.
func withPlugins(t *testing.T, e *env, plugins map[string]Plugin) *Manager {
	t.Helper()
	m, err := New(Options{RootDir: e.root, Source: e.src, Mounter: e.mnt, Logger: zap.NewNop(), Clock: e.clock, Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInlineVolumeSetUpOnceAcrossRestarts(t *testing.T) {
	e := newEnv(t)
	fp := &fakePlugin{}
	m := withPlugins(t, e, map[string]Plugin{testDriver: fp})
	e.src.putSecret("ns", "publish", map[string]string{"token": "s3cret"})
	v := inlineVolume("files", testDriver, map[string]string{"greeting": "hello"})
	v.CSI.NodePublishSecretRef = &corev1.LocalObjectReference{Name: "publish"}
	pod := testPod(v)

	paths, err := m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(e.root, "pods", "uid-1", "volumes", "kubernetes.io~csi", "files", "mount")
	if paths["files"] != want {
		t.Fatalf("path = %q, want %q", paths["files"], want)
	}
	if got := readFile(t, filepath.Join(want, "greeting")); got != "hello" {
		t.Errorf("greeting = %q", got)
	}
	got := fp.setUps[0]
	if got.Driver != testDriver || got.VolumeName != "files" || !got.ReadOnly || got.FSType != "ext4" ||
		got.PodNamespace != "ns" || got.PodName != "web" || got.PodUID != "uid-1" || got.ServiceAccountName != "sa" ||
		got.Dir != want || got.Secrets["token"] != "s3cret" {
		t.Errorf("SetUp got %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(want), inlineRecord)); err != nil || strings.Contains(string(b), "s3cret") {
		t.Errorf("record: %q, %v (no secrets may be written)", b, err)
	}
	if perm(t, want) != inlineDirMode {
		t.Errorf("mode %v", perm(t, want))
	}

	// Again, and from a restarted node: the volume is set up already.
	if _, err := m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	restarted := withPlugins(t, e, map[string]Plugin{testDriver: fp})
	if p, err := restarted.SetUp(context.Background(), pod); err != nil || p["files"] != want {
		t.Fatalf("SetUp after restart = %v, %v", p, err)
	}
	if n, _ := fp.counts(); n != 1 {
		t.Errorf("SetUp called %d times, want 1", n)
	}
}

func TestInlineVolumeUnknownDriver(t *testing.T) {
	e := newEnv(t)
	m := withPlugins(t, e, map[string]Plugin{testDriver: &fakePlugin{}})
	pod := testPod(inlineVolume("files", "other.example.com", nil))
	_, err := m.SetUp(context.Background(), pod)
	var ve *VolumeError
	if !errors.As(err, &ve) || ve.Volume != "files" || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want an ErrUnsupported VolumeError for files", err)
	}
	want := `MountVolume.SetUp failed for volume "files" : kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name other.example.com not found in the list of registered CSI drivers`
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	// Nothing was handed to a plugin, so there is nothing to tear down.
	if err := m.TearDown(context.Background(), "uid-1"); err != nil {
		t.Fatal(err)
	}
}

func TestInlineVolumeFailedSetUpIsRetriedAndTornDown(t *testing.T) {
	e := newEnv(t)
	fp := &fakePlugin{setUpErr: errors.New("backend down")}
	m := withPlugins(t, e, map[string]Plugin{testDriver: fp})
	pod := testPod(inlineVolume("files", testDriver, map[string]string{"a": "1"}),
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})

	paths, err := m.SetUp(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), `volume "files" : kubernetes.io/csi: driver files.example.com: backend down`) {
		t.Fatalf("err = %v", err)
	}
	if _, ok := paths["scratch"]; !ok {
		t.Errorf("the other volume was not set up: %v", paths)
	}
	// A node restarted after the failure (or after a crash in SetUp)
	// calls SetUp again: the record says it never succeeded.
	fp.setUpErr = nil
	m = withPlugins(t, e, map[string]Plugin{testDriver: fp})
	if _, err := m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if n, _ := fp.counts(); n != 2 {
		t.Fatalf("SetUp called %d times, want 2", n)
	}
}

func TestInlineVolumeTearDown(t *testing.T) {
	e := newEnv(t)
	fp := &fakePlugin{setUpErr: errors.New("half-way")}
	m := withPlugins(t, e, map[string]Plugin{testDriver: fp})
	pod := testPod(inlineVolume("files", testDriver, map[string]string{"a": "1"}))
	if _, err := m.SetUp(context.Background(), pod); err == nil {
		t.Fatal("SetUp succeeded")
	}

	// A failed TearDown keeps everything, and is called again.
	fp.tearDownErr = errors.New("busy")
	err := m.TearDown(context.Background(), "uid-1")
	if err == nil || !strings.Contains(err.Error(), "driver files.example.com: TearDown: busy") {
		t.Fatalf("TearDown err = %v", err)
	}
	if _, err := os.Stat(m.PodDir("uid-1")); err != nil {
		t.Fatalf("pod dir removed after a failed TearDown: %v", err)
	}
	// A node without the driver cannot tear it down either: it keeps it.
	bare := withPlugins(t, e, nil)
	if err := bare.TearDown(context.Background(), "uid-1"); err == nil || !strings.Contains(err.Error(), "driver name files.example.com not found") {
		t.Fatalf("TearDown without the driver: %v", err)
	}

	fp.tearDownErr = nil
	for range 2 {
		if err := m.TearDown(context.Background(), "uid-1"); err != nil {
			t.Fatal(err)
		}
	}
	_, tearDowns := fp.counts()
	if tearDowns != 2 { // the failed one and the one that succeeded
		t.Errorf("TearDown called %d times, want 2", tearDowns)
	}
	got := fp.tearDowns[1]
	if got.Attributes["a"] != "1" || got.PodName != "web" || got.Secrets != nil ||
		got.Dir != filepath.Join(m.PodDir("uid-1"), "volumes", pluginCSI, "files", "mount") {
		t.Errorf("TearDown got %+v", got)
	}
	if _, err := os.Stat(m.PodDir("uid-1")); !os.IsNotExist(err) {
		t.Errorf("pod dir remains (%v)", err)
	}
}

func TestInlineVolumeLeftMounted(t *testing.T) {
	e := newEnv(t)
	fp := &fakePlugin{}
	m := withPlugins(t, e, map[string]Plugin{testDriver: fp})
	paths, err := m.SetUp(context.Background(), testPod(inlineVolume("files", testDriver, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if fp.setUps[0].Attributes == nil {
		t.Error("Attributes of a volume without volumeAttributes are nil, want empty")
	}
	if err := e.mnt.MountTmpfs(context.Background(), paths["files"], 0); err != nil {
		t.Fatal(err)
	}
	if err := m.TearDown(context.Background(), "uid-1"); err == nil || !strings.Contains(err.Error(), "left "+paths["files"]+" mounted") {
		t.Fatalf("TearDown err = %v", err)
	}
	if _, err := os.Stat(paths["files"]); err != nil {
		t.Errorf("removed through a mount: %v", err)
	}
}

func TestInlineVolumeRefresh(t *testing.T) {
	e := newEnv(t)
	fp := &fakePlugin{}
	m := withPlugins(t, e, map[string]Plugin{testDriver: refreshingPlugin{fp}, "plain.example.com": &fakePlugin{}})
	pod := testPod(inlineVolume("files", testDriver, map[string]string{"a": "1"}),
		inlineVolume("plain", "plain.example.com", nil))
	if err := m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(fp.refreshes) != 0 {
		t.Fatal("refreshed a volume that is not set up")
	}
	if _, err := m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if len(fp.refreshes) != 1 || fp.refreshes[0].Attributes["a"] != "1" || fp.refreshes[0].VolumeName != "files" {
		t.Errorf("refreshes = %+v", fp.refreshes)
	}
}

func TestNewRejectsBadPlugins(t *testing.T) {
	for name, plugins := range map[string]map[string]Plugin{
		"nil plugin":   {testDriver: nil},
		"upper case":   {"Files.Example.com": &fakePlugin{}},
		"empty name":   {"": &fakePlugin{}},
		"too long":     {strings.Repeat("a", 64): &fakePlugin{}},
		"path element": {"a/b": &fakePlugin{}},
	} {
		if _, err := New(Options{RootDir: t.TempDir(), Plugins: plugins}); err == nil {
			t.Errorf("%s: New accepted %v", name, plugins)
		}
	}
}
