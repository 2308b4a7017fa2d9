package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func cmVolume(name, cm string, optional bool, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: items, Optional: &optional}}}
}

func secretVolume(name, secret string, optional bool, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, Items: items, Optional: &optional}}}
}

func TestConfigMapVolumeLayout(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"a.conf": "A", "b.conf": "B"})
	pod := testPod(cmVolume("config", "cfg", false))
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["config"]
	if want := filepath.Join(e.root, "pods/uid-1/volumes/kubernetes.io~configmap/config"); dir != want {
		t.Fatalf("path = %q, want %q", dir, want)
	}
	ts := dataTarget(t, dir)
	if !strings.HasPrefix(ts, "..2024_05_01_10_00_00.") {
		t.Errorf("..data -> %q, want a timestamped directory", ts)
	}
	for key, want := range map[string]string{"a.conf": "A", "b.conf": "B"} {
		link, err := os.Readlink(filepath.Join(dir, key))
		if err != nil || link != filepath.Join("..data", key) {
			t.Errorf("%s -> %q, %v; want ..data/%s", key, link, err, key)
		}
		if got := readFile(t, filepath.Join(dir, key)); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
		if p := perm(t, filepath.Join(dir, key)); p != 0o644 {
			t.Errorf("%s mode = %o, want 644", key, p)
		}
	}
	if p := perm(t, dir); p != 0o755 {
		t.Errorf("volume mode = %o, want 755", p)
	}
	if e.mnt.isMounted(dir) {
		t.Error("a configMap volume is on a tmpfs; the kubelet keeps them on disk")
	}
}

func TestConfigMapItemsModesAndBinary(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"a": "A"})
	e.src.cms["ns/cfg"].BinaryData = map[string][]byte{"bin": {0, 1, 2}}
	v := cmVolume("config", "cfg", false,
		corev1.KeyToPath{Key: "a", Path: "sub/dir/a.txt", Mode: ptr[int32](0o600)},
		corev1.KeyToPath{Key: "bin", Path: "bin"})
	v.ConfigMap.DefaultMode = ptr[int32](0o440)
	paths, err := e.m.SetUp(context.Background(), testPod(v))
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["config"]
	if got := readFile(t, filepath.Join(dir, "sub/dir/a.txt")); got != "A" {
		t.Errorf("a.txt = %q", got)
	}
	if p := perm(t, filepath.Join(dir, "sub/dir/a.txt")); p != 0o600 {
		t.Errorf("item mode = %o, want 600", p)
	}
	if p := perm(t, filepath.Join(dir, "bin")); p != 0o440 {
		t.Errorf("defaultMode = %o, want 440", p)
	}
	if got := readFile(t, filepath.Join(dir, "bin")); got != "\x00\x01\x02" {
		t.Errorf("bin = %q", got)
	}
	if link, _ := os.Readlink(filepath.Join(dir, "sub")); link != "..data/sub" {
		t.Errorf("sub -> %q, want ..data/sub (one link per top-level element)", link)
	}
}

func TestMissingObjectsAndKeys(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"a": "A"})
	pod := testPod(
		cmVolume("opt", "nope", true),
		cmVolume("req", "nope", false),
		cmVolume("badkey", "cfg", false, corev1.KeyToPath{Key: "zz", Path: "zz"}),
		cmVolume("optkey", "cfg", true, corev1.KeyToPath{Key: "zz", Path: "zz"}, corev1.KeyToPath{Key: "a", Path: "a"}),
		secretVolume("sec", "nosecret", false),
	)
	paths, err := e.m.SetUp(context.Background(), pod)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`MountVolume.SetUp failed for volume "req" : configmap "nope" not found`,
		`MountVolume.SetUp failed for volume "badkey" : configmap "cfg" references non-existent config key: zz`,
		`MountVolume.SetUp failed for volume "sec" : secret "nosecret" not found`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if entries, err := os.ReadDir(paths["opt"]); err != nil || len(entries) != 2 { // ..data and the ts dir
		t.Errorf("optional missing configmap: entries %v, %v; want an empty volume", entries, err)
	}
	if _, err := os.Stat(filepath.Join(paths["optkey"], "zz")); !os.IsNotExist(err) {
		t.Errorf("optional missing key: zz exists (%v)", err)
	}
	if got := readFile(t, filepath.Join(paths["optkey"], "a")); got != "A" {
		t.Errorf("optkey/a = %q", got)
	}
	for _, v := range []string{"req", "badkey", "sec"} {
		if _, ok := paths[v]; ok {
			t.Errorf("failed volume %s has a path", v)
		}
	}
}

func TestNoSource(t *testing.T) {
	m, err := New(Options{RootDir: t.TempDir(), Mounter: newFakeMounter()})
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod(cmVolume("opt", "c", true), secretVolume("req", "s", false))
	paths, err := m.SetUp(context.Background(), pod)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `volume "req"`) {
		t.Fatalf("err = %v, want ErrUnavailable naming req", err)
	}
	if _, ok := paths["opt"]; !ok {
		t.Error("an optional configMap without a Source is not an empty volume")
	}
}

func TestSourceErrorIsWrapped(t *testing.T) {
	e := newEnv(t)
	boom := errors.New("apiserver unreachable")
	e.src.err = boom
	_, err := e.m.SetUp(context.Background(), testPod(cmVolume("c", "cfg", false)))
	if !errors.Is(err, boom) || errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want the source's error and not ErrNotFound", err)
	}
}

func TestSecretOnTmpfsAndNeverLogged(t *testing.T) {
	e := newEnv(t)
	e.src.putSecret("ns", "creds", map[string]string{"password": "hunter2-s3cr3t"})
	paths, err := e.m.SetUp(context.Background(), testPod(secretVolume("creds", "creds", false)))
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["creds"]
	if want := filepath.Join(e.root, "pods/uid-1/volumes/kubernetes.io~secret/creds"); dir != want {
		t.Fatalf("path = %q, want %q", dir, want)
	}
	if !e.mnt.isMounted(dir) {
		t.Error("secret volume not on a tmpfs")
	}
	if got := readFile(t, filepath.Join(dir, "password")); got != "hunter2-s3cr3t" {
		t.Errorf("password = %q", got)
	}
	if _, err := e.m.SetUp(context.Background(), testPod(secretVolume("creds", "creds", false))); err != nil {
		t.Fatal(err)
	}
	if e.mnt.mounts != 1 {
		t.Errorf("mounts = %d, want 1", e.mnt.mounts)
	}
	assertNotLogged(t, e, "hunter2-s3cr3t")
}

func assertNotLogged(t *testing.T, e *env, secret string) {
	t.Helper()
	for _, entry := range e.logs.All() {
		if strings.Contains(entry.Message, secret) {
			t.Errorf("log %q holds secret data", entry.Message)
		}
		for k, v := range entry.ContextMap() {
			if strings.Contains(k, secret) || strings.Contains(stringOf(v), secret) {
				t.Errorf("log %q field %s holds secret data", entry.Message, k)
			}
		}
	}
}

func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return ""
}

func TestSecretFallsBackToDiskWithWarning(t *testing.T) {
	e := newEnv(t)
	e.mnt.mountErr = errors.New("operation not permitted")
	e.src.putSecret("ns", "creds", map[string]string{"k": "v"})
	paths, err := e.m.SetUp(context.Background(), testPod(secretVolume("creds", "creds", false)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(paths["creds"], "k")); got != "v" {
		t.Errorf("k = %q", got)
	}
	if n := e.logs.FilterMessageSnippet("tmpfs").Len(); n != 1 {
		t.Errorf("%d tmpfs warnings, want 1", n)
	}
	// Later, mounting works: the plain directory is kept (not hidden).
	e.mnt.mountErr = nil
	if _, err := e.m.SetUp(context.Background(), testPod(secretVolume("creds", "creds", false))); err != nil {
		t.Fatal(err)
	}
	if e.mnt.mounts != 0 {
		t.Errorf("mounted over a set-up volume")
	}
}

func TestDownwardAPIVolume(t *testing.T) {
	e := newEnv(t)
	v := corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
		{Path: "uid", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}},
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
		{Path: "app", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}},
		{Path: "cpu_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
		{Path: "mem_req", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}},
		{Path: "mem_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory"}, Mode: ptr[int32](0o400)},
	}}}}
	pod := testPod(v)
	pod.Annotations = map[string]string{"note": `say "hi"`}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
	}
	e.m.allocatable = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["info"]
	if !e.mnt.isMounted(dir) {
		t.Error("downwardAPI volume not on a tmpfs")
	}
	for f, want := range map[string]string{
		"name": "web", "ns": "ns", "uid": "uid-1",
		"labels":      "app=\"web\"\ntier=\"front\"",
		"annotations": `note="say \"hi\""`,
		"app":         "web",
		"cpu_limit":   "250",
		"mem_req":     "100",
		"mem_limit":   "2147483648",
	} {
		if got := readFile(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if p := perm(t, filepath.Join(dir, "mem_limit")); p != 0o400 {
		t.Errorf("mem_limit mode = %o", p)
	}

	bad := corev1.Volume{Name: "bad", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "node", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}}}
	if _, err := e.m.SetUp(context.Background(), testPod(bad)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "spec.nodeName") {
		t.Errorf("err = %v, want ErrInvalid naming spec.nodeName", err)
	}
}

func projectedPod() *corev1.Pod {
	return testPod(corev1.Volume{Name: "all", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr[int32](0o640),
		Sources: []corev1.VolumeProjection{
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"},
				Items: []corev1.KeyToPath{{Key: "password", Path: "secret/pw"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "podname", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "vault", ExpirationSeconds: ptr[int64](1000)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
		},
	}}})
}

func TestProjectedVolume(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"ca.crt": "CA"})
	e.src.putSecret("ns", "creds", map[string]string{"password": "pw-value"})
	paths, err := e.m.SetUp(context.Background(), projectedPod())
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["all"]
	if want := filepath.Join(e.root, "pods/uid-1/volumes/kubernetes.io~projected/all"); dir != want {
		t.Fatalf("path = %q, want %q", dir, want)
	}
	for f, want := range map[string]string{"ca.crt": "CA", "secret/pw": "pw-value", "podname": "web", "token": "token-1"} {
		if got := readFile(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
		if p := perm(t, filepath.Join(dir, f)); p != 0o640 {
			t.Errorf("%s mode = %o, want 640", f, p)
		}
	}
	want := TokenRequest{Namespace: "ns", ServiceAccountName: "sa", Audience: "vault", ExpirationSeconds: 1000, PodName: "web", PodUID: "uid-1"}
	if len(e.tokens.reqs) != 1 || e.tokens.reqs[0] != want {
		t.Errorf("token requests = %+v, want [%+v]", e.tokens.reqs, want)
	}
	assertNotLogged(t, e, "pw-value")
	assertNotLogged(t, e, "token-1")
}

func TestProjectedTokenRenewal(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", nil)
	e.src.putSecret("ns", "creds", map[string]string{"password": "x"})
	pod := projectedPod()
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(paths["all"], "token")
	e.clock.Step(799 * time.Second) // < 80% of 1000s
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if n := e.tokens.count(); n != 1 || readFile(t, token) != "token-1" {
		t.Fatalf("before 80%%: %d requests, token %q; want the cached one", n, readFile(t, token))
	}
	e.clock.Step(time.Second)
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if n := e.tokens.count(); n != 2 || readFile(t, token) != "token-2" {
		t.Fatalf("at 80%%: %d requests, token %q; want a new one", n, readFile(t, token))
	}
	// TearDown forgets the pod's tokens.
	if err := e.m.TearDown(context.Background(), "uid-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.SetUp(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if n := e.tokens.count(); n != 3 {
		t.Errorf("after TearDown: %d requests, want 3", n)
	}
}

func TestProjectedTokenWithoutRequester(t *testing.T) {
	src := newFakeSource()
	src.putConfigMap("ns", "cfg", nil)
	src.putSecret("ns", "creds", map[string]string{"password": "x"})
	m, err := New(Options{RootDir: t.TempDir(), Source: src, Mounter: newFakeMounter()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.SetUp(context.Background(), projectedPod())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "serviceAccountToken") {
		t.Fatalf("err = %v, want ErrUnavailable about serviceAccountToken", err)
	}
}

func TestUnsupportedTypes(t *testing.T) {
	e := newEnv(t)
	pod := testPod(
		corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
		corev1.Volume{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}}}}},
		corev1.Volume{Name: "ok", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	)
	paths, err := e.m.SetUp(context.Background(), pod)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	for _, want := range []string{
		`volume "data" : unsupported volume type persistentVolumeClaim`,
		`volume "nfs" : unsupported volume type nfs`,
		`volume "bundle" : unsupported projected volume source clusterTrustBundle`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, ok := paths["ok"]; !ok {
		t.Error("the supported volume was not set up")
	}
}

func TestRefreshRewritesChanges(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"a": "1", "b": "2"})
	pod := testPod(cmVolume("config", "cfg", false))
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := paths["config"]
	first := dataTarget(t, dir)

	// Unchanged: nothing is rewritten.
	e.clock.Step(time.Minute)
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := dataTarget(t, dir); got != first {
		t.Errorf("unchanged contents rewritten: ..data %q -> %q", first, got)
	}

	// Changed and removed keys.
	e.src.putConfigMap("ns", "cfg", map[string]string{"a": "1b", "c": "3"})
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	second := dataTarget(t, dir)
	if second == first {
		t.Fatal("..data not swapped")
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "1b" {
		t.Errorf("a = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "c")); got != "3" {
		t.Errorf("c = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Errorf("removed key b still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("old data dir %s not removed (%v)", first, err)
	}

	// A failing source keeps the files.
	e.src.err = errors.New("unreachable")
	if err := e.m.Refresh(context.Background(), pod); err == nil || !strings.Contains(err.Error(), `volume "config"`) {
		t.Errorf("err = %v, want one naming the volume", err)
	}
	if got := readFile(t, filepath.Join(dir, "a")); got != "1b" {
		t.Errorf("after failed refresh a = %q", got)
	}
}

func TestRefreshDownwardAPILabelsAndSkipsUnsetUp(t *testing.T) {
	e := newEnv(t)
	v := corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}}
	pod := testPod(v)
	// Not set up: Refresh makes nothing.
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if uids, _ := e.m.PodDirs(context.Background()); len(uids) != 0 {
		t.Fatalf("Refresh made pod dirs %v", uids)
	}
	paths, err := e.m.SetUp(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"app": "new"}
	if err := e.m.Refresh(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(paths["info"], "labels")); got != `app="new"` {
		t.Errorf("labels = %q", got)
	}
}

func TestConcurrentSetUpAndRefresh(t *testing.T) {
	e := newEnv(t)
	e.src.putConfigMap("ns", "cfg", map[string]string{"a": "1"})
	pod := testPod(cmVolume("config", "cfg", false), secretVolume("s", "sec", true))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, err := e.m.SetUp(context.Background(), pod)
				errs <- err
			} else {
				errs <- e.m.Refresh(context.Background(), pod)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if e.mnt.mounts != 1 {
		t.Errorf("mounts = %d, want 1", e.mnt.mounts)
	}
}
