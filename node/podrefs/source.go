package podrefs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/actorlet/actorlet/podspec"
)

// Source is a podspec.EnvSource over a client-go clientset. It is safe for
// concurrent use.
type Source struct {
	client kubernetes.Interface
}

var _ podspec.EnvSource = (*Source)(nil)

// New returns a Source reading with client. It does no I/O.
func New(client kubernetes.Interface) *Source {
	return &Source{client: client}
}

// ConfigMap gets a ConfigMap. Errors are client-go's, unwrapped: they name
// the object already (`configmaps "cfg" is forbidden: ...`), an object that
// does not exist is one for which apierrors.IsNotFound is true, as the
// EnvSource contract asks, and podspec.ContainerEnv wraps them with the
// namespace and name.
func (s *Source) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return s.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

// Secret gets a Secret, with ConfigMap's error contract. Errors never hold
// the Secret's data.
func (s *Source) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
