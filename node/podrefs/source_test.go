package podrefs

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/actorlet/actorlet/podspec"
)

func TestSource(t *testing.T) {
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": "v"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"}, Data: map[string][]byte{"password": []byte("s3cr3t")}},
	)
	s := New(client)
	ctx := context.Background()
	cases := []struct {
		name     string
		get      func() (string, error)
		want     string
		notFound bool
	}{
		{"configmap", func() (string, error) {
			cm, err := s.ConfigMap(ctx, "ns", "cfg")
			if err != nil {
				return "", err
			}
			return cm.Data["k"], nil
		}, "v", false},
		{"secret", func() (string, error) {
			sec, err := s.Secret(ctx, "ns", "sec")
			if err != nil {
				return "", err
			}
			return string(sec.Data["password"]), nil
		}, "s3cr3t", false},
		{"configmap of another namespace", func() (string, error) {
			_, err := s.ConfigMap(ctx, "other", "cfg")
			return "", err
		}, "", true},
		{"missing secret", func() (string, error) {
			_, err := s.Secret(ctx, "ns", "nope")
			return "", err
		}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.get()
			if c.notFound {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("error %v, want NotFound", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestSourceErrors: a failure other than NotFound (the Node authorizer's
// Forbidden) keeps its kind, and the container's environment error names
// the object once.
func TestSourceErrors(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "sec", errors.New("no relationship found between node 'n1' and this object"))
	})
	_, err := New(client).Secret(context.Background(), "ns", "sec")
	if !apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
		t.Fatalf("error %v, want Forbidden", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}}}}
	_, err = podspec.ContainerEnv(context.Background(), pod, c, podspec.EnvInputs{Source: New(client)})
	want := `couldn't get secret ns/sec: secrets "sec" is forbidden: no relationship found between node 'n1' and this object`
	if err == nil || err.Error() != want || !apierrors.IsForbidden(err) {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestSourceFeedsContainerEnv: through podspec.ContainerEnv, a missing
// ConfigMap is the kubelet's CreateContainerConfigError message and an
// optional one is skipped.
func TestSourceFeedsContainerEnv(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"}, Data: map[string][]byte{"password": []byte("s3cr3t")}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	yes := true
	c := &corev1.Container{Name: "app",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "opt"}, Optional: &yes}}},
		Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}}}}
	env, err := podspec.ContainerEnv(context.Background(), pod, c, podspec.EnvInputs{Source: New(client)})
	if err != nil || len(env.Vars) != 1 || env.Vars[0] != (podspec.EnvVar{Name: "P", Value: "s3cr3t"}) {
		t.Fatalf("env %v, %v", env.Vars, err)
	}
	c.EnvFrom[0].ConfigMapRef.Optional = nil
	_, err = podspec.ContainerEnv(context.Background(), pod, c, podspec.EnvInputs{Source: New(client)})
	if err == nil || err.Error() != `configmap "opt" not found` {
		t.Fatalf("error %v, want the kubelet's `configmap \"opt\" not found`", err)
	}
}
