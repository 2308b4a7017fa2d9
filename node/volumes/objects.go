package volumes

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// defaultMode is the mode of files when the volume sets none (the API's
// default, 0644).
const defaultMode os.FileMode = 0o644

// modeOr is *m as a file mode (permission bits only), or def.
func modeOr(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m) & os.ModePerm
}

// configMap reads a ConfigMap for a volume. A missing one (or no Source)
// is nil and no error when optional.
func (m *Manager) configMap(ctx context.Context, ns, name string, optional bool) (*corev1.ConfigMap, error) {
	if m.source == nil {
		if optional {
			return nil, nil
		}
		return nil, errorf(ErrUnavailable, "configmap %q: no API server to read it from", name)
	}
	cm, err := m.source.ConfigMap(ctx, ns, name)
	switch {
	case (err == nil && cm == nil) || apierrors.IsNotFound(err):
		if optional {
			return nil, nil
		}
		return nil, errorf(ErrNotFound, "configmap %q not found", name)
	case err != nil:
		return nil, fmt.Errorf("get configmap %q: %w", name, err)
	}
	return cm, nil
}

// secret is configMap for Secrets.
func (m *Manager) secret(ctx context.Context, ns, name string, optional bool) (*corev1.Secret, error) {
	if m.source == nil {
		if optional {
			return nil, nil
		}
		return nil, errorf(ErrUnavailable, "secret %q: no API server to read it from", name)
	}
	s, err := m.source.Secret(ctx, ns, name)
	switch {
	case (err == nil && s == nil) || apierrors.IsNotFound(err):
		if optional {
			return nil, nil
		}
		return nil, errorf(ErrNotFound, "secret %q not found", name)
	case err != nil:
		return nil, fmt.Errorf("get secret %q: %w", name, err)
	}
	return s, nil
}

// configMapPayload is the payload of a ConfigMap (nil: an optional one
// that is missing, which makes an empty volume): every key of data and
// binaryData, or only the items, at their paths. A missing item key fails
// unless the reference is optional.
func configMapPayload(cm *corev1.ConfigMap, items []corev1.KeyToPath, mode os.FileMode, optional bool, into payload) error {
	if cm == nil {
		return nil
	}
	lookup := func(key string) ([]byte, bool) {
		if s, ok := cm.Data[key]; ok {
			return []byte(s), true
		}
		b, ok := cm.BinaryData[key]
		return b, ok
	}
	if len(items) == 0 {
		for k, v := range cm.Data {
			into[k] = file{data: []byte(v), mode: mode}
		}
		for k, v := range cm.BinaryData {
			into[k] = file{data: v, mode: mode}
		}
		return nil
	}
	for _, it := range items {
		data, ok := lookup(it.Key)
		if !ok {
			if optional {
				continue
			}
			return errorf(ErrNotFound, "configmap %q references non-existent config key: %s", cm.Name, it.Key)
		}
		into[it.Path] = file{data: data, mode: modeOr(it.Mode, mode)}
	}
	return nil
}

// secretPayload is configMapPayload for Secrets (data only: stringData
// is folded into data by the API server).
func secretPayload(s *corev1.Secret, items []corev1.KeyToPath, mode os.FileMode, optional bool, into payload) error {
	if s == nil {
		return nil
	}
	if len(items) == 0 {
		for k, v := range s.Data {
			into[k] = file{data: v, mode: mode}
		}
		return nil
	}
	for _, it := range items {
		data, ok := s.Data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return errorf(ErrNotFound, "secret %q references non-existent secret key: %s", s.Name, it.Key)
		}
		into[it.Path] = file{data: data, mode: modeOr(it.Mode, mode)}
	}
	return nil
}
