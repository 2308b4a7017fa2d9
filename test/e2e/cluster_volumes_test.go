package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkAPIVolumes runs a pod with volumes from the API server on
// containerd, on the node nodeName that actorlet runs (with a short
// --sync-frequency): a configMap file read through exec, then updated in
// place; a secret's file and an environment variable from it; a projected
// service account token requested through the TokenRequest API; the
// downward API. The secret's value never reaches the node's journal.
func checkAPIVolumes(t *testing.T, admin kubernetes.Interface, e *containerdEnv, d nodeDirs, nodeName string) {
	ctx := context.Background()
	ns := "default"
	name := "vols-" + nodeName
	const secretValue = "s3cret-d4ta-only-in-the-api"
	cms, secrets := admin.CoreV1().ConfigMaps(ns), admin.CoreV1().Secrets(ns)
	for _, f := range []func() error{
		func() error {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"color": "blue"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": secretValue}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = cms.Delete(ctx, name, metav1.DeleteOptions{})
		_ = secrets.Delete(ctx, name, metav1.DeleteOptions{})
		_ = admin.CoreV1().ServiceAccounts(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	expiry := int64(3600)
	pod := apiPod(name, nodeName, corev1.Container{
		Name: "app", Image: e.workload, ImagePullPolicy: corev1.PullNever,
		Args: []string{"-msg", "password is $(PASSWORD)", "-print-every", "1s"},
		Env: []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "password"}}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "conf", MountPath: "/etc/conf"},
			{Name: "creds", MountPath: "/etc/creds"},
			{Name: "token", MountPath: "/var/run/secrets/tokens"},
		},
	})
	pod.Labels = map[string]string{"tier": "volumes"}
	pod.Spec.ServiceAccountName = name
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
		}}}},
	}
	pods := admin.CoreV1().Pods(ns)
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	waitFor(t, name+" Running", func() (bool, string) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 {
			_, id, _ = strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
		}
		return id != "", summary(p)
	})
	cat := func(path string) (string, error) {
		return e.crictlTry("exec", id, "/workload", "-cat", path, "-exit", "0")
	}
	expect := func(what, path string, ok func(string) bool) {
		t.Helper()
		waitFor(t, what, func() (bool, string) {
			out, err := cat(path)
			return err == nil && ok(out), fmt.Sprint(out, err)
		})
	}
	expect("the configMap file", "/etc/conf/color", func(s string) bool { return strings.Contains(s, "blue") })
	expect("the secret file", "/etc/creds/password", func(s string) bool { return strings.Contains(s, secretValue) })
	expect("a service account token", "/var/run/secrets/tokens/token", func(s string) bool { return strings.Count(strings.TrimSpace(s), ".") == 2 })
	expect("the pod's labels", "/var/run/secrets/tokens/labels", func(s string) bool { return strings.Contains(s, `tier="volumes"`) })
	waitFor(t, "the password in the log, from the secret", func() (bool, string) {
		out, err := e.crictlTry("logs", id)
		return err == nil && strings.Contains(out, "password is "+secretValue), out
	})

	// Updated in place: the running container sees the new value.
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "red"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("the configMap file updated in place", "/etc/conf/color", func(s string) bool { return strings.Contains(s, "red") })

	journal, err := os.ReadFile(filepath.Join(d.root, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(journal, []byte(secretValue)) {
		t.Fatal("the secret's value is in the journal")
	}

	// Deleted: its volumes (the secret's and the token's tmpfs too) go.
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	podDir := filepath.Join(d.root, "pods", string(created.UID))
	waitFor(t, name+"'s volumes torn down", func() (bool, string) {
		_, err := os.Stat(podDir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
}

// crictlTry runs crictl against the test's containerd and returns its
// output, or an error with its stderr.
func (e *containerdEnv) crictlTry(args ...string) (string, error) {
	args = append([]string{"--runtime-endpoint", e.endpoint, "--image-endpoint", e.endpoint, "--timeout", "30s"}, args...)
	cmd := exec.Command(e.crictl, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("crictl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
