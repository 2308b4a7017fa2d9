package staticpod

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrNoNodeName is returned when the node name is empty.
var ErrNoNodeName = errors.New("staticpod: node name is required")

// ReadFile reads one manifest and returns its pod, defaulted, bound to the
// node and validated (see the package doc). The config.seen annotation is the
// current time. An error is a *ManifestError naming path.
func ReadFile(path, nodeName string) (*corev1.Pod, error) {
	if nodeName == "" {
		return nil, ErrNoNodeName
	}
	pod, err := readManifest(filepath.Clean(path), nodeName)
	if err != nil {
		return nil, err
	}
	stampSeen(pod, time.Now())
	return pod, nil
}

// ReadDir reads every manifest in dir once, without watching. Files that do
// not yield a pod are Rejections; a missing dir is an empty Snapshot. The
// error is non-nil only when dir itself cannot be read. The config.seen
// annotations are the current time. As with the kubelet, dir may also name a
// single manifest file.
func ReadDir(dir, nodeName string) (Snapshot, error) {
	if nodeName == "" {
		return Snapshot{}, ErrNoNodeName
	}
	snap, _, err := readPath(dir, nodeName)
	if err != nil {
		return Snapshot{}, err
	}
	now := time.Now()
	for _, p := range snap.Pods {
		stampSeen(p, now)
	}
	return snap, nil
}

// readPath reads the manifests at path, a directory or a single file. missing
// reports that path does not exist (snap is then empty and err nil). The pods
// carry no config.seen annotation yet.
func readPath(path, nodeName string) (snap Snapshot, missing bool, err error) {
	path = filepath.Clean(path)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Snapshot{}, true, nil
	case err != nil:
		return Snapshot{}, false, fmt.Errorf("static pod path %q: %w", path, err)
	case info.Mode().IsRegular():
		snap.add(path, nodeName, nil)
		return snap, false, nil
	case !info.IsDir():
		return Snapshot{}, false, fmt.Errorf("static pod path %q is neither a directory nor a regular file (mode %v)", path, info.Mode())
	}

	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("static pod path %q: %w", path, err)
	}
	owners := map[string]string{} // namespace/name -> file defining it
	for _, e := range entries {
		if skipName(e.Name()) {
			continue
		}
		file := filepath.Join(path, e.Name())
		fi, err := os.Stat(file) // follows symlinks
		if err != nil {
			if _, lerr := os.Lstat(file); errors.Is(err, fs.ErrNotExist) && errors.Is(lerr, fs.ErrNotExist) {
				continue // removed since the listing
			}
			snap.Rejected = append(snap.Rejected, Rejection{File: file, Err: manifestError(file, ErrUnreadable, err)})
			continue
		}
		if !fi.Mode().IsRegular() {
			continue // the kubelet does not recurse into directories either
		}
		snap.add(file, nodeName, owners)
	}
	return snap, false, nil
}

// add reads file and appends its pod or its rejection. owners, if not nil,
// detects a second pod with the same namespace/name.
func (s *Snapshot) add(file, nodeName string, owners map[string]string) {
	pod, err := readManifest(file, nodeName)
	if errors.Is(err, fs.ErrNotExist) {
		return // removed since the listing
	}
	if err == nil && owners != nil {
		key := pod.Namespace + "/" + pod.Name
		if prev, dup := owners[key]; dup {
			err = manifestError(file, ErrDuplicate, fmt.Errorf("pod %s is already defined by %q", key, prev))
		} else {
			owners[key] = file
		}
	}
	if err != nil {
		s.Rejected = append(s.Rejected, Rejection{File: file, Err: err})
		return
	}
	s.Pods = append(s.Pods, pod)
}

// skipName reports whether a directory entry is not a manifest: hidden files
// (which include vim's .name.swp and the ..data links of projected volumes)
// and editor temporaries.
func skipName(name string) bool {
	switch {
	case strings.HasPrefix(name, "."),
		strings.HasSuffix(name, "~"), // emacs and vim backups
		len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"), // emacs autosave
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swo"), strings.HasSuffix(name, ".swx"),
		name == "4913": // vim's probe that the directory is writable
		return true
	}
	return false
}

func readManifest(path, nodeName string) (*corev1.Pod, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, manifestError(path, ErrUnreadable, err)
	}
	return parseManifest(path, nodeName, data)
}

// parseManifest decodes, defaults, binds and validates one manifest.
func parseManifest(path, nodeName string, data []byte) (*corev1.Pod, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, manifestError(path, ErrDecode, err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, manifestError(path, ErrDecode, err)
	}
	if tm.APIVersion != "v1" || tm.Kind != "Pod" {
		return nil, manifestError(path, ErrNotPod,
			fmt.Errorf(`apiVersion %q kind %q, want apiVersion "v1" kind "Pod"`, tm.APIVersion, tm.Kind))
	}
	pod := &corev1.Pod{}
	if err := yaml.UnmarshalStrict(doc, pod); err != nil {
		return nil, manifestError(path, ErrDecode, err)
	}
	if pod.Name == "" {
		// Checked before the node suffix makes the name non-empty.
		return nil, &ManifestError{File: path, Kind: ErrInvalid,
			Fields: field.ErrorList{field.Required(field.NewPath("metadata", "name"), "")}}
	}
	ApplyDefaults(pod)
	if err := bindToNode(pod, path, nodeName); err != nil {
		return nil, manifestError(path, ErrInvalid, err)
	}
	if errs := Validate(pod); len(errs) > 0 {
		return nil, &ManifestError{File: path, Kind: ErrInvalid, Fields: errs}
	}
	return pod, nil
}

// singleDocument returns the only non-empty YAML document of data (JSON is
// YAML too). No document, or more than one, is an error.
func singleDocument(data []byte) ([]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var found []byte
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue // empty or comments only
		}
		if n++; n > 1 {
			return nil, errors.New("more than one YAML document; a manifest holds exactly one Pod")
		}
		found = doc
	}
	if n == 0 {
		return nil, errors.New("empty manifest")
	}
	return found, nil
}
