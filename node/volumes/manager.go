package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Paths are the host paths of a pod's volumes, by volume name: what the
// containers' volumeMounts bind (see podspec.ContainerMounts). It is an
// alias, so that a consumer's interface can say map[string]string without
// importing this package.
type Paths = map[string]string

// Manager sets up and tears down the local volumes of pods (see the
// package doc for the layout and the guarantees). It is safe for
// concurrent use; calls for one pod are serialized.
type Manager struct {
	root        string
	source      Source
	tokenReq    TokenRequester
	plugins     map[string]Plugin
	mounter     Mounter
	allocatable corev1.ResourceList
	log         *zap.Logger
	clock       clock.PassiveClock
	observer    OperationObserver

	locks  podLocks
	tokens tokenCache
}

// New returns a Manager. It touches nothing on disk: directories are made
// by SetUp. RootDir must be an absolute path.
func New(o Options) (*Manager, error) {
	if o.RootDir == "" || !filepath.IsAbs(o.RootDir) {
		return nil, fmt.Errorf("volumes: root directory %q must be an absolute path", o.RootDir)
	}
	if err := validatePlugins(o.Plugins); err != nil {
		return nil, err
	}
	m := &Manager{
		root:        filepath.Clean(o.RootDir),
		source:      o.Source,
		tokenReq:    o.Tokens,
		plugins:     maps.Clone(o.Plugins),
		mounter:     o.Mounter,
		allocatable: o.Allocatable,
		log:         o.Logger,
		clock:       o.Clock,
		observer:    o.Observer,
	}
	if m.mounter == nil {
		m.mounter = SystemMounter{}
	}
	if m.log == nil {
		m.log = zap.NewNop()
	}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	return m, nil
}

// SetUp makes the pod's volumes ready to be mounted into its containers
// and returns their host paths. It is idempotent: for a pod already set
// up it mounts nothing again and rewrites only the files whose source
// changed (as Refresh). Every volume is tried; the error joins one
// *VolumeError per volume that failed, and Paths then holds the others.
func (m *Manager) SetUp(ctx context.Context, pod *corev1.Pod) (Paths, error) {
	uid := string(pod.UID)
	if !validName(uid) {
		return nil, errorf(ErrInvalid, "pod %s/%s: invalid UID %q", pod.Namespace, pod.Name, uid)
	}
	defer m.locks.lock(uid)()
	log := m.podLogger(pod)
	paths := make(Paths, len(pod.Spec.Volumes))
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		start := m.clock.Now()
		p, err := m.setUpVolume(ctx, log.With(zap.String("volume", v.Name)), pod, v)
		m.observe(pluginName(v), OperationMount, start, err)
		if err != nil {
			errs = append(errs, &VolumeError{Volume: v.Name, Err: err})
			continue
		}
		paths[v.Name] = p
	}
	return paths, errors.Join(errs...)
}

func (m *Manager) setUpVolume(ctx context.Context, log *zap.Logger, pod *corev1.Pod, v *corev1.Volume) (string, error) {
	if !validName(v.Name) {
		return "", errorf(ErrInvalid, "invalid volume name %q", v.Name)
	}
	s := &v.VolumeSource
	switch {
	case s.EmptyDir != nil:
		return m.setUpEmptyDir(ctx, log, pod, v.Name, s.EmptyDir)
	case s.HostPath != nil:
		return setUpHostPath(s.HostPath)
	case s.CSI != nil:
		return m.setUpInline(ctx, log, pod, v)
	}
	plugin, tmpfs, ok := dataPlugin(v)
	if !ok {
		return "", errorf(ErrUnsupported, "unsupported volume type %s", setField(v.VolumeSource))
	}
	p, err := m.dataPayload(ctx, pod, v)
	if err != nil {
		return "", err
	}
	dir := m.volumeDir(string(pod.UID), plugin, v.Name)
	if err := m.makeDir(dir, dataDirMode); err != nil {
		return "", err
	}
	if tmpfs {
		if err := m.mountDataTmpfs(ctx, log, dir); err != nil {
			return "", err
		}
	}
	written, err := writeAtomic(dir, p, m.clock.Now(), m.dataOwnership(log, pod, dir))
	if err != nil {
		return "", fmt.Errorf("write volume files: %w", err)
	}
	if written {
		log.Debug("Volume files written", zap.Int("files", len(p)))
	}
	return dir, nil
}

// Refresh rewrites the files of the pod's configMap, secret, downwardAPI
// and projected volumes whose sources changed (new ConfigMap or Secret
// data, new labels or annotations in pod, a token due for renewal), each
// atomically for the readers, and calls Refresh of the plugins of its
// inline volumes that are Refreshers. A volume that is not set up is skipped (it
// never makes one). A volume whose source cannot be read keeps its files;
// the error joins one *VolumeError per such volume.
func (m *Manager) Refresh(ctx context.Context, pod *corev1.Pod) error {
	uid := string(pod.UID)
	if !validName(uid) {
		return errorf(ErrInvalid, "pod %s/%s: invalid UID %q", pod.Namespace, pod.Name, uid)
	}
	defer m.locks.lock(uid)()
	log := m.podLogger(pod)
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		if v.CSI != nil && validName(v.Name) {
			if err := m.refreshInline(ctx, pod, v); err != nil {
				errs = append(errs, &VolumeError{Volume: v.Name, Err: err})
			}
			continue
		}
		plugin, _, ok := dataPlugin(v)
		if !ok || !validName(v.Name) {
			continue
		}
		dir := m.volumeDir(uid, plugin, v.Name)
		if _, err := os.Lstat(filepath.Join(dir, dataDirName)); err != nil {
			continue
		}
		p, err := m.dataPayload(ctx, pod, v)
		if err == nil {
			var written bool
			if written, err = writeAtomic(dir, p, m.clock.Now(), m.dataOwnership(log, pod, dir)); written {
				log.Info("Volume updated", zap.String("volume", v.Name), zap.Int("files", len(p)))
			}
		}
		if err != nil {
			errs = append(errs, &VolumeError{Volume: v.Name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// TearDown calls the plugins' TearDown for the pod's inline volumes (see
// Plugin), unmounts the pod's tmpfs mounts and removes its directory
// (<root>/pods/<podUID>, termination-message files included), and forgets
// its tokens. A pod without a directory is done. If a plugin's TearDown
// fails, or its driver is not registered, nothing is removed. If an unmount fails,
// nothing is removed; the removal itself never crosses into another file
// system, and fails on one still mounted. It may be called again after a
// failure or a crash half-way.
func (m *Manager) TearDown(ctx context.Context, podUID string) error {
	if !validName(podUID) {
		return errorf(ErrInvalid, "invalid pod UID %q", podUID)
	}
	defer m.locks.lock(podUID)()
	m.tokens.forget(podUID)
	podDir := m.PodDir(podUID)
	if _, err := os.Lstat(podDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// Inline volumes first: their plugins may have mounted something.
	start, hadCSI := m.clock.Now(), m.hasPluginDir(podUID, pluginCSI)
	err := m.tearDownInline(ctx, podUID)
	if hadCSI {
		m.observe("kubernetes.io/csi", OperationUnmount, start, err)
	}
	if err != nil {
		return fmt.Errorf("tear down pod %s: %w", podUID, err)
	}
	var errs []error
	volRoot := filepath.Join(podDir, "volumes")
	plugins, err := os.ReadDir(volRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tear down pod %s: %w", podUID, err)
	}
	for _, pl := range plugins {
		if !pl.IsDir() {
			continue
		}
		start := m.clock.Now()
		vols, err := os.ReadDir(filepath.Join(volRoot, pl.Name()))
		if err != nil {
			m.observe(dirPluginName(pl.Name()), OperationUnmount, start, err)
			errs = append(errs, err)
			continue
		}
		var plErrs []error
		for _, v := range vols {
			if !v.IsDir() {
				continue
			}
			dir := filepath.Join(volRoot, pl.Name(), v.Name())
			mounted, err := m.mounter.IsMountPoint(ctx, dir)
			if err == nil && mounted {
				err = m.mounter.Unmount(ctx, dir)
			}
			if err != nil {
				plErrs = append(plErrs, err)
			}
		}
		if pl.Name() != pluginCSI { // counted above
			m.observe(dirPluginName(pl.Name()), OperationUnmount, start, errors.Join(plErrs...))
		}
		errs = append(errs, plErrs...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("tear down pod %s: unmount volumes: %w", podUID, errors.Join(errs...))
	}
	if err := removeAllOneFS(podDir); err != nil {
		return fmt.Errorf("tear down pod %s: %w", podUID, err)
	}
	m.log.Debug("Pod volumes torn down", zap.String("podUID", podUID))
	return nil
}

// PodDirs lists the UIDs of the pods that have a directory, for the
// caller to tear down those it no longer runs (orphans).
func (m *Manager) PodDirs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(m.podsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list pod directories: %w", err)
	}
	var uids []string
	for _, e := range entries {
		if e.IsDir() && validName(e.Name()) {
			uids = append(uids, e.Name())
		}
	}
	return uids, nil
}

func (m *Manager) podLogger(pod *corev1.Pod) *zap.Logger {
	return m.log.With(zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("podUID", string(pod.UID)))
}

// makeDir makes the volume directory dir with mode, and the directories
// above it down from <root>/pods with dirMode. Modes are set only on the
// directories it creates.
func (m *Manager) makeDir(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(m.podsDir(), dirMode); err != nil {
		return err
	}
	rel, err := filepath.Rel(m.podsDir(), dir)
	if err != nil {
		return err
	}
	cur := m.podsDir()
	parts := strings.Split(rel, string(filepath.Separator))
	for i, p := range parts {
		cur = filepath.Join(cur, p)
		md := os.FileMode(dirMode)
		if i == len(parts)-1 {
			md = mode
		}
		if err := makeOneDir(cur, md); err != nil {
			return err
		}
	}
	return nil
}

// makeOneDir creates dir with mode (whatever the umask), or checks that
// it is a directory.
func makeOneDir(dir string, mode os.FileMode) error {
	err := os.Mkdir(dir, mode)
	if err == nil {
		return os.Chmod(dir, mode)
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	return nil
}
