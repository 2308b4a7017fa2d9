package volumes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The kubelet's names for a CSI volume's directory: its record and the
// directory containers mount.
const (
	pluginCSI     = "kubernetes.io~csi"
	inlineRecord  = "vol_data.json"
	inlineMount   = "mount"
	inlineDirMode = 0o755
)

// inlineState is the record of an inline volume, written before its
// plugin's SetUp (the intent) and marked SetUp after it succeeded, so that
// TearDown finds every volume a plugin may have touched, also for a pod
// whose spec is gone (an orphan after a crash). No secrets.
type inlineState struct {
	Driver             string            `json:"driver"`
	VolumeName         string            `json:"volumeName"`
	Attributes         map[string]string `json:"attributes,omitempty"`
	ReadOnly           bool              `json:"readOnly,omitempty"`
	FSType             string            `json:"fsType,omitempty"`
	PodNamespace       string            `json:"podNamespace"`
	PodName            string            `json:"podName"`
	PodUID             string            `json:"podUID"`
	ServiceAccountName string            `json:"serviceAccountName,omitempty"`
	SecretRef          string            `json:"nodePublishSecretRef,omitempty"`
	// SetUp: the plugin's SetUp returned success for this record.
	SetUp bool `json:"setUp"`
}

func (s *inlineState) volume(dir string) *InlineVolume {
	attrs := maps.Clone(s.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	return &InlineVolume{
		Driver: s.Driver, VolumeName: s.VolumeName, Attributes: attrs,
		ReadOnly: s.ReadOnly, FSType: s.FSType,
		PodNamespace: s.PodNamespace, PodName: s.PodName, PodUID: types.UID(s.PodUID),
		ServiceAccountName: s.ServiceAccountName, Dir: filepath.Join(dir, inlineMount),
	}
}

// sameVolume: the record is of the same volume source (the pod's volumes
// are immutable, so it differs only for a reused UID).
func (s *inlineState) sameVolume(o *inlineState) bool {
	return s.Driver == o.Driver && maps.Equal(s.Attributes, o.Attributes) && s.ReadOnly == o.ReadOnly &&
		s.FSType == o.FSType && s.SecretRef == o.SecretRef
}

func inlineStateOf(pod *corev1.Pod, v *corev1.Volume) *inlineState {
	c := v.CSI
	s := &inlineState{
		Driver: c.Driver, VolumeName: v.Name, Attributes: maps.Clone(c.VolumeAttributes),
		ReadOnly: c.ReadOnly != nil && *c.ReadOnly, PodNamespace: pod.Namespace, PodName: pod.Name,
		PodUID: string(pod.UID), ServiceAccountName: pod.Spec.ServiceAccountName,
	}
	if c.FSType != nil {
		s.FSType = *c.FSType
	}
	if c.NodePublishSecretRef != nil {
		s.SecretRef = c.NodePublishSecretRef.Name
	}
	return s
}

// errNoDriver is the kubelet's error for an inline volume whose driver is
// not registered.
func errNoDriver(driver string) error {
	return errorf(ErrUnsupported, "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name %s not found in the list of registered CSI drivers", driver)
}

// setUpInline sets up a CSI ephemeral inline volume with its driver's
// plugin (see Plugin for the guarantees) and returns the directory
// containers mount.
func (m *Manager) setUpInline(ctx context.Context, log *zap.Logger, pod *corev1.Pod, v *corev1.Volume) (string, error) {
	want := inlineStateOf(pod, v)
	if want.Driver == "" {
		return "", errorf(ErrInvalid, "csi volume without a driver name")
	}
	plugin, ok := m.plugins[want.Driver]
	if !ok {
		return "", errNoDriver(want.Driver)
	}
	dir := m.volumeDir(string(pod.UID), pluginCSI, v.Name)
	have, err := readInlineState(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if have != nil && have.SetUp && have.sameVolume(want) {
		return filepath.Join(dir, inlineMount), nil
	}
	if have != nil && have.Driver != want.Driver {
		// Only a reused pod UID gets here: never hand one driver's
		// directory to another.
		return "", errorf(ErrInvalid, "volume directory %s belongs to driver %s", dir, have.Driver)
	}
	iv := want.volume(dir)
	if iv.Secrets, err = m.inlineSecrets(ctx, pod.Namespace, v.CSI); err != nil {
		return "", err
	}
	if err := m.makeDir(dir, dirMode); err != nil {
		return "", err
	}
	if err := writeInlineState(dir, want); err != nil {
		return "", err
	}
	if err := makeOneDir(iv.Dir, inlineDirMode); err != nil {
		return "", err
	}
	if err := plugin.SetUp(ctx, iv); err != nil {
		return "", fmt.Errorf("kubernetes.io/csi: driver %s: %w", want.Driver, err)
	}
	want.SetUp = true
	if err := writeInlineState(dir, want); err != nil {
		return "", err
	}
	log.Debug("Inline volume set up", zap.String("driver", want.Driver))
	return iv.Dir, nil
}

// inlineSecrets reads the Secret of nodePublishSecretRef (nil without one).
func (m *Manager) inlineSecrets(ctx context.Context, ns string, c *corev1.CSIVolumeSource) (map[string]string, error) {
	if c.NodePublishSecretRef == nil {
		return nil, nil
	}
	s, err := m.secret(ctx, ns, c.NodePublishSecretRef.Name, false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out, nil
}

// refreshInline calls the plugin's Refresh for a volume that is set up;
// volumes not set up, and plugins without Refresh, are skipped.
func (m *Manager) refreshInline(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) error {
	plugin, ok := m.plugins[v.CSI.Driver]
	if !ok {
		return nil
	}
	r, ok := plugin.(Refresher)
	if !ok {
		return nil
	}
	dir := m.volumeDir(string(pod.UID), pluginCSI, v.Name)
	have, err := readInlineState(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !have.SetUp) {
		return nil
	}
	if err != nil {
		return err
	}
	iv := have.volume(dir)
	if iv.Secrets, err = m.inlineSecrets(ctx, pod.Namespace, v.CSI); err != nil {
		return err
	}
	if err := r.Refresh(ctx, iv); err != nil {
		return fmt.Errorf("kubernetes.io/csi: driver %s: refresh: %w", v.CSI.Driver, err)
	}
	return nil
}

// tearDownInline calls the plugin's TearDown for every inline volume of
// the pod that has a record, then deletes the record. It fails for a
// volume whose driver is not registered (its directory is kept) and for
// one still mounted after its TearDown.
func (m *Manager) tearDownInline(ctx context.Context, podUID string) error {
	root := filepath.Join(m.PodDir(podUID), "volumes", pluginCSI)
	vols, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range vols {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := m.tearDownOneInline(ctx, dir); err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) tearDownOneInline(ctx context.Context, dir string) error {
	st, err := readInlineState(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // never handed to a plugin, or already torn down
	}
	if err != nil {
		return err
	}
	plugin, ok := m.plugins[st.Driver]
	if !ok {
		return fmt.Errorf("kubernetes.io/csi: TearDown: driver name %s not found in the list of registered CSI drivers", st.Driver)
	}
	iv := st.volume(dir)
	if err := plugin.TearDown(ctx, iv); err != nil {
		return fmt.Errorf("kubernetes.io/csi: driver %s: TearDown: %w", st.Driver, err)
	}
	if mounted, err := m.mounter.IsMountPoint(ctx, iv.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if mounted {
		return fmt.Errorf("kubernetes.io/csi: driver %s left %s mounted after TearDown", st.Driver, iv.Dir)
	}
	if err := os.Remove(filepath.Join(dir, inlineRecord)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func readInlineState(dir string) (*inlineState, error) {
	b, err := os.ReadFile(filepath.Join(dir, inlineRecord))
	if err != nil {
		return nil, err
	}
	var s inlineState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, inlineRecord), err)
	}
	return &s, nil
}

// writeInlineState replaces the record atomically (a temporary file
// synced, then renamed over it), so a crash leaves the old or the new one.
func writeInlineState(dir string, s *inlineState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+inlineRecord+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, inlineRecord)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
