package volumes

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// dataPlugin tells whether v is a volume of files written from sources
// (configMap, secret, downwardAPI, projected), its plugin directory, and
// whether it goes on a tmpfs (all but configMap, as in the kubelet).
func dataPlugin(v *corev1.Volume) (plugin string, tmpfs, ok bool) {
	switch s := &v.VolumeSource; {
	case s.ConfigMap != nil:
		return pluginConfigMap, false, true
	case s.Secret != nil:
		return pluginSecret, true, true
	case s.DownwardAPI != nil:
		return pluginDownwardAPI, true, true
	case s.Projected != nil:
		return pluginProjected, true, true
	}
	return "", false, false
}

// dataPayload reads the sources of a data volume and returns its files.
// With an fsGroup, each file's mode has the group read bits the ownership
// change gives it (see dataOwnership), so that an unchanged volume reads
// as unchanged.
func (m *Manager) dataPayload(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (payload, error) {
	p, err := m.sourcePayload(ctx, pod, v)
	if err != nil || podFSGroup(pod) == nil {
		return p, err
	}
	for path, f := range p {
		f.mode = fsGroupMode(f.mode, true)
		p[path] = f
	}
	return p, nil
}

// dataOwnership is the step writeAtomic runs before it publishes a new
// version of the data volume at dir: with the pod's fsGroup, the whole
// volume gets that group (read-only bits), as the kubelet's setPerms of
// its AtomicWriter does at each write; nil without an fsGroup. A failure
// is logged and the volume published as it is, as the kubelet does.
func (m *Manager) dataOwnership(log *zap.Logger, pod *corev1.Pod, dir string) func() {
	gid := podFSGroup(pod)
	if gid == nil {
		return nil
	}
	return func() {
		if err := setVolumeOwnership(dir, *gid, true); err != nil {
			log.Warn("Could not give the volume its fsGroup", zap.Int64("fsGroup", *gid), zap.Error(err))
		}
	}
}

// sourcePayload reads the sources of a data volume and returns its files.
func (m *Manager) sourcePayload(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (payload, error) {
	p := payload{}
	switch s := &v.VolumeSource; {
	case s.ConfigMap != nil:
		opt := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
		cm, err := m.configMap(ctx, pod.Namespace, s.ConfigMap.Name, opt)
		if err != nil {
			return nil, err
		}
		return p, configMapPayload(cm, s.ConfigMap.Items, modeOr(s.ConfigMap.DefaultMode, defaultMode), opt, p)
	case s.Secret != nil:
		opt := s.Secret.Optional != nil && *s.Secret.Optional
		sec, err := m.secret(ctx, pod.Namespace, s.Secret.SecretName, opt)
		if err != nil {
			return nil, err
		}
		return p, secretPayload(sec, s.Secret.Items, modeOr(s.Secret.DefaultMode, defaultMode), opt, p)
	case s.DownwardAPI != nil:
		return p, m.downwardAPIPayload(pod, s.DownwardAPI.Items, modeOr(s.DownwardAPI.DefaultMode, defaultMode), p)
	case s.Projected != nil:
		return p, m.projectedPayload(ctx, pod, s.Projected, p)
	}
	return nil, errorf(ErrUnsupported, "unsupported volume type %s", setField(v.VolumeSource))
}

// projectedPayload adds the files of every source of a projected volume,
// in order, to into.
func (m *Manager) projectedPayload(ctx context.Context, pod *corev1.Pod, pr *corev1.ProjectedVolumeSource, into payload) error {
	mode := modeOr(pr.DefaultMode, defaultMode)
	for i := range pr.Sources {
		src := &pr.Sources[i]
		switch {
		case src.ConfigMap != nil:
			opt := src.ConfigMap.Optional != nil && *src.ConfigMap.Optional
			cm, err := m.configMap(ctx, pod.Namespace, src.ConfigMap.Name, opt)
			if err != nil {
				return err
			}
			if err := configMapPayload(cm, src.ConfigMap.Items, mode, opt, into); err != nil {
				return err
			}
		case src.Secret != nil:
			opt := src.Secret.Optional != nil && *src.Secret.Optional
			sec, err := m.secret(ctx, pod.Namespace, src.Secret.Name, opt)
			if err != nil {
				return err
			}
			if err := secretPayload(sec, src.Secret.Items, mode, opt, into); err != nil {
				return err
			}
		case src.DownwardAPI != nil:
			if err := m.downwardAPIPayload(pod, src.DownwardAPI.Items, mode, into); err != nil {
				return err
			}
		case src.ServiceAccountToken != nil:
			if m.tokenReq == nil {
				return errorf(ErrUnavailable, "projected serviceAccountToken %q: no token requester on this node (no API server)", src.ServiceAccountToken.Path)
			}
			tok, err := m.tokens.token(ctx, m.tokenReq, tokenRequest(pod, src.ServiceAccountToken), m.clock.Now())
			if err != nil {
				return err
			}
			tokMode := mode
			if podFSGroup(pod) != nil {
				tokMode = 0o600 // the group's read bit comes from the fsGroup, as in the kubelet
			}
			into[src.ServiceAccountToken.Path] = file{data: []byte(tok), mode: tokMode}
		default:
			return errorf(ErrUnsupported, "unsupported projected volume source %s", setField(*src))
		}
	}
	return nil
}

// mountDataTmpfs puts a new data volume directory on a tmpfs, or leaves it
// a plain directory with a warning if the Mounter cannot mount one. A
// directory that already holds files (set up earlier without a tmpfs) is
// left as it is: mounting over it would hide the files from the
// containers that mount it.
func (m *Manager) mountDataTmpfs(ctx context.Context, log *zap.Logger, dir string) error {
	mounted, err := m.mounter.IsMountPoint(ctx, dir)
	if err != nil || mounted {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, dataDirName)); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := m.mounter.MountTmpfs(ctx, dir, 0); err != nil {
		log.Warn("Cannot mount a tmpfs for the volume: its files go to disk", zap.String("path", dir), zap.Error(err))
		return nil
	}
	return os.Chmod(dir, dataDirMode)
}

// setField is the JSON name of the first non-nil pointer field of a
// struct (a VolumeSource or a VolumeProjection): its type.
func setField(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return "unknown"
	}
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = rv.Type().Field(i).Name
		}
		return name
	}
	return "unknown"
}
