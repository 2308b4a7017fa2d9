// Package podspectest has fakes for tests of code that builds containers'
// configs (package podspec) or runs them (package actors).
package podspectest

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EnvSource is a podspec.EnvSource over maps keyed "namespace/name";
// objects can be added while it is in use. Safe for concurrent use.
type EnvSource struct {
	mu      sync.Mutex
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
	err     error
	gets    int
}

// NewEnvSource returns an EnvSource holding nothing.
func NewEnvSource() *EnvSource {
	return &EnvSource{cms: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

// PutConfigMap adds or replaces a ConfigMap.
func (f *EnvSource) PutConfigMap(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cms[ns+"/"+name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// PutSecret adds or replaces a Secret.
func (f *EnvSource) PutSecret(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	f.secrets[ns+"/"+name] = s
}

// FailWith makes every later call return err (nil: answer again).
func (f *EnvSource) FailWith(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// Gets is how many objects were asked for so far.
func (f *EnvSource) Gets() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets
}

// ConfigMap returns a copy of the ConfigMap, or a NotFound error as
// client-go's.
func (f *EnvSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return get(f, f.cms, "configmaps", ns, name)
}

// Secret returns a copy of the Secret, or a NotFound error as client-go's.
func (f *EnvSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	return get(f, f.secrets, "secrets", ns, name)
}

func get[T interface{ DeepCopy() T }](f *EnvSource, m map[string]T, resource, ns, name string) (T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	var zero T
	if f.err != nil {
		return zero, f.err
	}
	if o, ok := m[ns+"/"+name]; ok {
		return o.DeepCopy(), nil
	}
	return zero, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

// ConfigMapKey is an env valueFrom a ConfigMap's key.
func ConfigMapKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

// SecretKey is an env valueFrom a Secret's key.
func SecretKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
}

// SecretFrom is an envFrom of a Secret's keys, prefixed.
func SecretFrom(name, prefix string, optional bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{Prefix: prefix, SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: &optional}}
}
