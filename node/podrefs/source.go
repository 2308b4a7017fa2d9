package podrefs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/actorlet/actorlet/actors"
)

// Source is an actors.EnvSource over a client-go clientset. It is safe for
// concurrent use.
type Source struct {
	client kubernetes.Interface
}

var _ actors.EnvSource = (*Source)(nil)

// New returns a Source reading with client. It does no I/O.
func New(client kubernetes.Interface) *Source {
	return &Source{client: client}
}

// ConfigMap gets a ConfigMap. An object that does not exist is an error for
// which apierrors.IsNotFound is true, as the EnvSource contract asks; every
// error is wrapped and names the object.
func (s *Source) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm, err := s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get configmap %s/%s: %w", namespace, name, err)
	}
	return cm, nil
}

// Secret gets a Secret, with ConfigMap's error contract. The error never
// holds the Secret's data.
func (s *Source) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	sec, err := s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	return sec, nil
}
