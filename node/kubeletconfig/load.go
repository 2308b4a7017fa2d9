package kubeletconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// Kind is the kind of a kubelet configuration file.
const Kind = "KubeletConfiguration"

// Error kinds of Load and MergeDropIns, for errors.Is. Every error also
// names the file.
var (
	// ErrDecode: the file is empty, not YAML or JSON, not a
	// kubelet.config.k8s.io/v1beta1 KubeletConfiguration, or has values of
	// the wrong type.
	ErrDecode = errors.New("cannot decode kubelet configuration")
)

// codecs decode kubelet.config.k8s.io/v1beta1 strictly (unknown and
// duplicate fields are errors); lenient ones do not.
var codecs, lenientCodecs = func() (serializer.CodecFactory, serializer.CodecFactory) {
	scheme := runtime.NewScheme()
	if err := kubeletconfigv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict), serializer.NewCodecFactory(scheme)
}()

// Load reads a KubeletConfiguration file as the kubelet v1.37 does: strictly,
// and when only the strict rules fail (an unknown or duplicate field) again
// leniently, returning the strict error as a warning to log, as the kubelet
// logs "Using lenient decoding as strict decoding failed". The result has the
// profile's defaults, and its relative paths (staticPodPath, the client CA,
// the serving certificate and key, resolvConf, volumePluginDir, podLogsDir)
// are resolved against the file's directory.
func Load(path string, p Profile) (cfg *kubeletconfigv1beta1.KubeletConfiguration, warning error, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config file %q: %w", path, err)
	}
	cfg, warning, err = decodeFile(abs)
	if err != nil {
		return nil, nil, err
	}
	for _, ref := range pathRefs(cfg) {
		if *ref != "" && !filepath.IsAbs(*ref) {
			*ref = filepath.Join(filepath.Dir(abs), *ref)
		}
	}
	SetDefaults(cfg, p)
	return cfg, warning, nil
}

func decodeFile(path string) (*kubeletconfigv1beta1.KubeletConfiguration, error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read kubelet config file %q: %w", path, err)
	}
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("kubelet config file %q was empty: %w", path, ErrDecode)
	}
	cfg, err := decode(codecs, data)
	if err == nil {
		return cfg, nil, nil
	}
	if !runtime.IsStrictDecodingError(err) {
		return nil, nil, fmt.Errorf("kubelet config file %q: %w: %w", path, ErrDecode, err)
	}
	cfg, lerr := decode(lenientCodecs, data)
	if lerr != nil {
		return nil, nil, fmt.Errorf("kubelet config file %q: %w: failed lenient decoding: %w", path, ErrDecode, err)
	}
	return cfg, fmt.Errorf("kubelet config file %q: using lenient decoding as strict decoding failed: %w", path, err), nil
}

// decode reads a kubelet.config.k8s.io/v1beta1 KubeletConfiguration; its
// apiVersion and kind must say so.
func decode(c serializer.CodecFactory, data []byte) (*kubeletconfigv1beta1.KubeletConfiguration, error) {
	obj, gvk, err := c.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*kubeletconfigv1beta1.KubeletConfiguration)
	if !ok {
		return nil, fmt.Errorf("failed to cast object to KubeletConfiguration, unexpected type: %v", gvk)
	}
	return cfg, nil
}

// pathRefs are the path fields the kubelet resolves against the config
// file's directory.
func pathRefs(c *kubeletconfigv1beta1.KubeletConfiguration) []*string {
	refs := []*string{&c.StaticPodPath, &c.Authentication.X509.ClientCAFile, &c.TLSCertFile, &c.TLSPrivateKeyFile,
		&c.VolumePluginDir, &c.PodLogsDir}
	if c.ResolverConfig != nil {
		refs = append(refs, c.ResolverConfig)
	}
	return refs
}

// MergeDropIns merges the drop-in files of dir (--config-dir) over base as
// the kubelet does: every regular file named *.conf in dir and its
// subdirectories, in lexical order of their paths, each a
// kubelet.config.k8s.io/v1beta1 KubeletConfiguration decoded strictly, is
// applied as a JSON merge patch; the result gets the profile's defaults.
// Relative paths in drop-ins are not resolved (nor are they by the kubelet).
// skipped lists the files without the .conf suffix.
func MergeDropIns(base *kubeletconfigv1beta1.KubeletConfiguration, dir string, p Profile) (merged *kubeletconfigv1beta1.KubeletConfiguration, skipped []string, err error) {
	doc, err := json.Marshal(base)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet config: %w", err)
	}
	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
		case filepath.Ext(d.Name()) != ".conf":
			skipped = append(skipped, path)
		default:
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to walk through kubelet dropin directory %q: %w", dir, err)
	}
	sort.Strings(files)
	for _, f := range files {
		patch, err := dropInJSON(f)
		if err != nil {
			return nil, nil, err
		}
		if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
			return nil, nil, fmt.Errorf("failed to merge drop-in %q and current config: %w", f, err)
		}
	}
	merged = &kubeletconfigv1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(doc, merged); err != nil {
		return nil, nil, fmt.Errorf("failed to unmarshal merged JSON into kubelet configuration: %w", err)
	}
	SetDefaults(merged, p)
	return merged, skipped, nil
}

// dropInJSON reads a drop-in as the kubelet does: YAML or JSON without
// duplicate fields, of apiVersion kubelet.config.k8s.io/v1beta1 and kind
// KubeletConfiguration; the patch is the document as written (fields
// unknown to the type are dropped when the merge is decoded).
func dropInJSON(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, error: %w", path, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("kubelet config file %q was empty: %w", path, ErrDecode)
	}
	doc, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s: %w: %w", path, ErrDecode, err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(doc, &tm); err != nil {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s: %w: %w", path, ErrDecode, err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, no apiVersion/kind: %w", path, ErrDecode)
	}
	if want := kubeletconfigv1beta1.SchemeGroupVersion.WithKind(Kind); tm.GroupVersionKind() != want {
		return nil, fmt.Errorf("failed to load kubelet dropin file, path: %s, unknown apiVersion/kind: %v: %w", path, tm.GroupVersionKind(), ErrDecode)
	}
	return doc, nil
}
