package podspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func mountsPod(mounts ...corev1.VolumeMount) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
			},
			Containers: []corev1.Container{{Name: "c", VolumeMounts: mounts}},
		},
	}
}

// volumeDirs makes a directory per volume of mountsPod under a temp dir.
func volumeDirs(t *testing.T) map[string]string {
	t.Helper()
	root := t.TempDir()
	paths := map[string]string{}
	for _, v := range []string{"data", "cfg", "creds", "host"} {
		paths[v] = filepath.Join(root, v)
		if err := os.Mkdir(paths[v], 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(paths[v], 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

func TestContainerMountsBasic(t *testing.T) {
	paths := volumeDirs(t)
	host2c := corev1.MountPropagationHostToContainer
	pod := mountsPod(
		corev1.VolumeMount{Name: "data", MountPath: "/data"},
		corev1.VolumeMount{Name: "data", MountPath: "/ro", ReadOnly: true},
		corev1.VolumeMount{Name: "cfg", MountPath: "/etc/cfg"},
		corev1.VolumeMount{Name: "creds", MountPath: "/etc/creds"},
		corev1.VolumeMount{Name: "host", MountPath: "/host", MountPropagation: &host2c},
	)
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*runtimeapi.Mount{
		{ContainerPath: "/data", HostPath: paths["data"]},
		{ContainerPath: "/ro", HostPath: paths["data"], Readonly: true},
		{ContainerPath: "/etc/cfg", HostPath: paths["cfg"], Readonly: true},
		{ContainerPath: "/etc/creds", HostPath: paths["creds"], Readonly: true},
		{ContainerPath: "/host", HostPath: paths["host"], Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mounts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Errorf("mount %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestContainerMountsSubPath(t *testing.T) {
	paths := volumeDirs(t)
	pod := mountsPod(
		corev1.VolumeMount{Name: "data", MountPath: "/a", SubPath: "logs/app"},
		corev1.VolumeMount{Name: "data", MountPath: "/b", SubPath: "logs/app"}, // again: exists
	)
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(paths["data"], "logs", "app")
	for _, m := range got {
		if m.HostPath != want {
			t.Errorf("HostPath = %q, want %q", m.HostPath, want)
		}
	}
	fi, err := os.Stat(want)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Errorf("subPath dir = %v, %v; want a directory with the volume's mode 0777", fi, err)
	}
}

func TestContainerMountsSubPathFileInConfigMap(t *testing.T) {
	paths := volumeDirs(t)
	// The atomic writer's layout: key -> ..data/key -> ..ts/key.
	ts := filepath.Join(paths["cfg"], "..2024_01_01_00_00_00.1")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts, "app.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(paths["cfg"], "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/app.yaml", filepath.Join(paths["cfg"], "app.yaml")); err != nil {
		t.Fatal(err)
	}
	pod := mountsPod(corev1.VolumeMount{Name: "cfg", MountPath: "/etc/app.yaml", SubPath: "app.yaml"})
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	realTs, _ := filepath.EvalSymlinks(ts)
	if got[0].HostPath != filepath.Join(realTs, "app.yaml") || !got[0].Readonly {
		t.Errorf("mount = %v, want the resolved file, read-only", got[0])
	}
}

func TestContainerMountsRejects(t *testing.T) {
	outside := t.TempDir()
	bidi := corev1.MountPropagationBidirectional
	for _, tc := range []struct {
		name  string
		vm    corev1.VolumeMount
		setup func(t *testing.T, paths map[string]string)
		kind  bool // ErrInvalidVolumeMount
		msg   string
	}{
		{name: "unknown volume", vm: corev1.VolumeMount{Name: "nope", MountPath: "/n"}, kind: true,
			msg: `cannot find volume "nope" to mount into container "c"`},
		{name: "absolute subPath", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPath: "/etc"}, kind: true, msg: "must be a relative path"},
		{name: "dotdot subPath", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPath: "a/../../etc"}, kind: true, msg: "must not contain '..'"},
		{name: "symlink escape", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPath: "link/x"}, kind: true, msg: "escapes its volume",
			setup: func(t *testing.T, paths map[string]string) {
				if err := os.Symlink(outside, filepath.Join(paths["data"], "link")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "subPathExpr of an unknown variable", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPathExpr: "$(NOPE)/$(EMPTY)/x"}, kind: true,
			msg: `subPathExpr "$(NOPE)/$(EMPTY)/x": missing value for EMPTY, NOPE`},
		{name: "subPathExpr absolute", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPathExpr: "$(ROOT)etc"}, kind: true,
			msg: `volumeMount "data" at /n: subPathExpr "$(ROOT)etc": subPath "/etc" must be a relative path`},
		{name: "subPathExpr climbing out", vm: corev1.VolumeMount{Name: "data", MountPath: "/n", SubPathExpr: "a/$(UP)/etc"}, kind: true,
			msg: `volumeMount "data" at /n: subPathExpr "a/$(UP)/etc": subPath "a/../../etc" must not contain '..'`},
		{name: "bidirectional unprivileged", vm: corev1.VolumeMount{Name: "host", MountPath: "/n", MountPropagation: &bidi}, kind: true,
			msg: "only to privileged containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := volumeDirs(t)
			if tc.setup != nil {
				tc.setup(t, paths)
			}
			pod := mountsPod(tc.vm)
			env := Env{Vars: []EnvVar{{Name: "ROOT", Value: "/"}, {Name: "UP", Value: "../.."}, {Name: "EMPTY", Value: ""}}}
			_, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, env)
			if err == nil || errors.Is(err, ErrInvalidVolumeMount) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want kind %v and %q", err, tc.kind, tc.msg)
			}
			if !strings.Contains(err.Error(), `container "c"`) {
				t.Errorf("err %q does not name the container", err)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("created %v outside the volume", entries)
	}
}

// A subPathExpr is expanded from the container's environment, as the
// kubelet does ($$ an escaped $), and the result is mounted as a subPath:
// created under the volume when missing.
func TestContainerMountsSubPathExpr(t *testing.T) {
	paths := volumeDirs(t)
	pod := mountsPod(corev1.VolumeMount{Name: "data", MountPath: "/logs", SubPathExpr: "$(POD_NAME)/$$(LIT)-$(NS)"})
	env := Env{Vars: []EnvVar{{Name: "POD_NAME", Value: "web-0"}, {Name: "NS", Value: "prod"}}}
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, env)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(paths["data"], "web-0", "$(LIT)-prod")
	if realData, err := filepath.EvalSymlinks(paths["data"]); err == nil {
		want = filepath.Join(realData, "web-0", "$(LIT)-prod")
	}
	if got[0].HostPath != want || got[0].ContainerPath != "/logs" {
		t.Errorf("mount = %v, want %s at /logs", got[0], want)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Errorf("subPath directory not created: %v", err)
	}
}

func TestContainerMountsNotSetUp(t *testing.T) {
	pod := mountsPod(corev1.VolumeMount{Name: "data", MountPath: "/d"})
	_, err := ContainerMounts(pod, &pod.Spec.Containers[0], map[string]string{}, Env{})
	if err == nil || !strings.Contains(err.Error(), `volume "data" is not set up`) {
		t.Fatalf("err = %v", err)
	}
}

func TestContainerMountsBidirectionalPrivileged(t *testing.T) {
	paths := volumeDirs(t)
	bidi := corev1.MountPropagationBidirectional
	yes := true
	pod := mountsPod(corev1.VolumeMount{Name: "host", MountPath: "/h", MountPropagation: &bidi})
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Propagation != runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL {
		t.Errorf("propagation = %v", got[0].Propagation)
	}
}

func TestContainerMountsRecursiveReadOnly(t *testing.T) {
	paths := volumeDirs(t)
	enabled := corev1.RecursiveReadOnlyEnabled
	pod := mountsPod(corev1.VolumeMount{Name: "data", MountPath: "/d", ReadOnly: true, RecursiveReadOnly: &enabled})
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil || !got[0].RecursiveReadOnly || !got[0].Readonly {
		t.Fatalf("= %v, %v; want a recursive read-only mount", got, err)
	}
	pod = mountsPod(corev1.VolumeMount{Name: "data", MountPath: "/d", RecursiveReadOnly: &enabled})
	if _, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{}); !errors.Is(err, ErrInvalidVolumeMount) {
		t.Errorf("recursiveReadOnly without readOnly: err = %v", err)
	}
}

// A CSI inline volume with readOnly is mounted read-only into every
// container, as the kubelet mounts it; without readOnly as the mount says.
func TestContainerMountsCSIReadOnly(t *testing.T) {
	ro, rw := true, false
	pod := mountsPod(corev1.VolumeMount{Name: "ro", MountPath: "/ro"}, corev1.VolumeMount{Name: "rw", MountPath: "/rw"})
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: "ro", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d.example.com", ReadOnly: &ro}}},
		corev1.Volume{Name: "rw", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d.example.com", ReadOnly: &rw}}})
	paths := map[string]string{"ro": t.TempDir(), "rw": t.TempDir()}
	got, err := ContainerMounts(pod, &pod.Spec.Containers[0], paths, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Readonly || got[1].Readonly {
		t.Errorf("mounts %v: want /ro read-only, /rw not", got)
	}
}
