package kubeletconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// Kind is the kind of a kubelet configuration file.
const Kind = "KubeletConfiguration"

// Error kinds of Load, for errors.Is. Every error also names the file.
var (
	// ErrWrongKind: the file is not a kubelet.config.k8s.io/v1beta1
	// KubeletConfiguration.
	ErrWrongKind = errors.New("not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration")
	// ErrDecode: the file is not a YAML/JSON object, or has unknown or
	// duplicate fields, or values of the wrong type.
	ErrDecode = errors.New("cannot decode kubelet configuration")
	// ErrInvalid: a supported field has a value actorlet cannot use.
	ErrInvalid = errors.New("invalid kubelet configuration")
)

// Load reads a KubeletConfiguration (k8s.io/kubelet/config/v1beta1) from a
// YAML or JSON file. Unknown fields are an error. ignored lists, sorted, the
// JSON paths of the fields set in the file that actorlet does not honour (see
// Supported), for the caller to log once; they are decoded but have no
// effect. Unset supported fields are given the kubelet's defaults, and
// relative staticPodPath, podLogsDir and resolvConf are resolved against the
// file's directory.
func Load(path string) (cfg *kubeletconfigv1beta1.KubeletConfiguration, ignored []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config %q: %w", path, err)
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: %w", path, ErrDecode, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(j, &raw); err != nil {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: not an object: %w", path, ErrDecode, err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: %w", path, ErrDecode, err)
	}
	if want := kubeletconfigv1beta1.SchemeGroupVersion.String(); tm.APIVersion != want || tm.Kind != Kind {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: got apiVersion %q kind %q", path, ErrWrongKind, tm.APIVersion, tm.Kind)
	}

	cfg = &kubeletconfigv1beta1.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: %w", path, ErrDecode, err)
	}
	resolveRelative(cfg, filepath.Dir(path))
	applyDefaults(cfg)
	if errs := validate(cfg); len(errs) > 0 {
		return nil, nil, fmt.Errorf("kubelet config %q: %w: %w", path, ErrInvalid, errs.ToAggregate())
	}
	return cfg, ignoredFields(raw, SupportedFields), nil
}

// resolveRelative makes the supported path fields absolute against root, as
// the kubelet does with the directory of its config file. Empty paths stay
// empty.
func resolveRelative(c *kubeletconfigv1beta1.KubeletConfiguration, root string) {
	paths := []*string{&c.StaticPodPath, &c.PodLogsDir}
	if c.ResolverConfig != nil {
		paths = append(paths, c.ResolverConfig)
	}
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
}
