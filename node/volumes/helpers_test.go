package volumes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeSource serves ConfigMaps and Secrets from maps keyed
// "namespace/name"; err, when set, fails every read.
type fakeSource struct {
	mu      sync.Mutex
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
	err     error
	reads   int
}

func newFakeSource() *fakeSource {
	return &fakeSource{cms: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

func (f *fakeSource) putConfigMap(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cms[ns+"/"+name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func (f *fakeSource) putSecret(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	f.secrets[ns+"/"+name] = s
}

func (f *fakeSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	cm, ok := f.cms[ns+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return cm.DeepCopy(), nil
}

func (f *fakeSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	s, ok := f.secrets[ns+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

// fakeMounter records tmpfs mounts by target; mountErr and unmountErr,
// when set, fail those calls.
type fakeMounter struct {
	mu         sync.Mutex
	mounted    map[string]int64 // target → size
	mounts     int
	unmounts   int
	mountErr   error
	unmountErr error
}

func newFakeMounter() *fakeMounter { return &fakeMounter{mounted: map[string]int64{}} }

func (f *fakeMounter) MountTmpfs(_ context.Context, target string, size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mountErr != nil {
		return f.mountErr
	}
	if _, ok := f.mounted[target]; ok {
		return errors.New("fake: already mounted: " + target)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return errors.New("fake: no directory at " + target)
	}
	f.mounted[target] = size
	f.mounts++
	return nil
}

func (f *fakeMounter) Unmount(_ context.Context, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unmountErr != nil {
		return f.unmountErr
	}
	delete(f.mounted, target)
	f.unmounts++
	return nil
}

func (f *fakeMounter) IsMountPoint(_ context.Context, path string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.mounted[path]
	return ok, nil
}

func (f *fakeMounter) isMounted(path string) bool {
	ok, _ := f.IsMountPoint(context.Background(), path)
	return ok
}

// fakeTokens issues tokens "token-<n>" valid for the requested seconds.
type fakeTokens struct {
	mu    sync.Mutex
	clock *clocktesting.FakeClock
	reqs  []TokenRequest
}

func (f *fakeTokens) RequestToken(_ context.Context, req TokenRequest) (Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	return Token{
		Value:   fmt.Sprintf("token-%d", len(f.reqs)),
		Expires: f.clock.Now().Add(time.Duration(req.ExpirationSeconds) * time.Second),
	}, nil
}

func (f *fakeTokens) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

type env struct {
	m      *Manager
	root   string
	src    *fakeSource
	mnt    *fakeMounter
	clock  *clocktesting.FakeClock
	tokens *fakeTokens
	logs   *observer.ObservedLogs
}

func newEnv(t *testing.T) *env {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	clk := clocktesting.NewFakeClock(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	e := &env{
		root:   t.TempDir(),
		src:    newFakeSource(),
		mnt:    newFakeMounter(),
		clock:  clk,
		tokens: &fakeTokens{clock: clk},
		logs:   logs,
	}
	m, err := New(Options{RootDir: e.root, Source: e.src, Tokens: e.tokens, Mounter: e.mnt, Logger: zap.New(core), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

func testPod(vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1",
			Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "sa",
			Volumes:            vols,
			Containers:         []corev1.Container{{Name: "c"}},
		},
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// dataTarget is where the volume's ..data points.
func dataTarget(t *testing.T, dir string) string {
	t.Helper()
	l, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func ptr[T any](v T) *T { return &v }
