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
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ErrNoNodeName is returned when the node name is empty.
var ErrNoNodeName = errors.New("staticpod: node name is required")

// Size limits of a manifest. The kubelet reads static pod files whole with
// no limit (a 60 MB file costs gigabytes of memory and a journal record as
// large); actorlet refuses what the API server would refuse anyway:
//   - MaxManifestBytes, the API server's limit on a request body (its
//     MaxRequestBodyBytes, 3 MiB), since a static pod's mirror pod has to
//     be sent there;
//   - the pod's annotations over 256 KiB in total, the API server's
//     TotalAnnotationSizeLimitB (checked with the other validation).
const MaxManifestBytes = 3 << 20

// ReadFile reads one manifest and returns its pod, defaulted, bound to the
// node and validated (see the package doc). The config.seen annotation is the
// current time. An error is a *ManifestError naming path. Unknown fields
// are ignored here; ReadDir and Source report them as Warnings.
func ReadFile(path, nodeName string) (*corev1.Pod, error) {
	if nodeName == "" {
		return nil, ErrNoNodeName
	}
	pod, _, err := readManifest(filepath.Clean(path), nodeName)
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
		file := filepath.Join(path, e.Name())
		if reason := skipReason(e.Name()); reason != "" {
			snap.Skipped = append(snap.Skipped, Skip{File: file, Reason: reason})
			continue
		}
		fi, err := os.Stat(file) // follows symlinks
		if err != nil {
			if _, lerr := os.Lstat(file); errors.Is(err, fs.ErrNotExist) && errors.Is(lerr, fs.ErrNotExist) {
				continue // removed since the listing
			}
			snap.Rejected = append(snap.Rejected, Rejection{File: file, Err: manifestError(file, ErrUnreadable, err)})
			continue
		}
		if !fi.Mode().IsRegular() {
			reason := "not a regular file (" + fi.Mode().Type().String() + ")"
			if fi.IsDir() {
				reason = "a directory: subdirectories are not read, as by the kubelet"
			}
			snap.Skipped = append(snap.Skipped, Skip{File: file, Reason: reason})
			continue
		}
		snap.add(file, nodeName, owners)
	}
	return snap, false, nil
}

// add reads file and appends its pod or its rejection. owners, if not nil,
// detects a second pod with the same namespace/name.
func (s *Snapshot) add(file, nodeName string, owners map[string]string) {
	pod, warning, err := readManifest(file, nodeName)
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
	if warning != "" {
		s.Warnings = append(s.Warnings, Warning{File: file, Msg: warning})
	}
}

// skipName reports whether a directory entry is not a manifest (see
// skipReason).
func skipName(name string) bool { return skipReason(name) != "" }

// skipReason says why a directory entry is not a manifest, or "": hidden
// files (which include vim's .name.swp and the ..data links of projected
// volumes) and editor backups and temporaries.
func skipReason(name string) string {
	switch {
	case strings.HasPrefix(name, "."):
		return "a hidden file (name starts with a dot)"
	case strings.HasSuffix(name, "~"), // emacs and vim backups
		len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"), // emacs autosave
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swo"), strings.HasSuffix(name, ".swx"),
		name == "4913": // vim's probe that the directory is writable
		return "an editor backup or temporary file"
	}
	return ""
}

func readManifest(path, nodeName string) (*corev1.Pod, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", manifestError(path, ErrUnreadable, err)
	}
	defer f.Close()
	// Read one byte past the limit, so a file that grows while it is read
	// is caught too.
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, "", manifestError(path, ErrUnreadable, err)
	}
	if len(data) > MaxManifestBytes {
		return nil, "", manifestError(path, ErrTooLarge,
			fmt.Errorf("larger than %d bytes (the API server's limit on a request)", MaxManifestBytes))
	}
	return parseManifest(path, nodeName, data)
}

// parseManifest decodes, defaults, binds and validates one manifest. The
// warning names every unknown or duplicate field, which are ignored, as
// the kubelet's decoder ignores them.
func parseManifest(path, nodeName string, data []byte) (*corev1.Pod, string, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, "", manifestError(path, ErrDecode, err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, "", manifestError(path, ErrDecode, err)
	}
	if tm.APIVersion != "v1" || tm.Kind != "Pod" {
		return nil, "", manifestError(path, ErrNotPod,
			fmt.Errorf(`apiVersion %q kind %q, want apiVersion "v1" kind "Pod"`, tm.APIVersion, tm.Kind))
	}
	pod, warning, err := decodePod(doc)
	if err != nil {
		return nil, "", manifestError(path, ErrDecode, err)
	}
	ApplyDefaults(pod)
	if pod.Name == "" {
		// Checked before the node suffix makes the name non-empty, with
		// every other problem.
		return nil, "", &ManifestError{File: path, Kind: ErrInvalid, Fields: Validate(pod)}
	}
	if err := bindToNode(pod, path, nodeName); err != nil {
		return nil, "", manifestError(path, ErrInvalid, err)
	}
	if errs := Validate(pod); len(errs) > 0 {
		kind := ErrInvalid
		for _, e := range errs {
			if e.Type == field.ErrorTypeTooLong && e.Field == "metadata.annotations" {
				kind = ErrTooLarge
			}
		}
		return nil, "", &ManifestError{File: path, Kind: kind, Fields: errs}
	}
	return pod, warning, nil
}

// decodePod decodes one YAML or JSON document into a Pod, case-sensitively
// as the API server does. Unknown and duplicate fields do not stop it: they
// are named, all of them, in the warning.
func decodePod(doc []byte) (*corev1.Pod, string, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, "", err
	}
	pod := &corev1.Pod{}
	strict, err := kjson.UnmarshalStrict(j, pod, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, "", err
	}
	if len(strict) == 0 {
		return pod, "", nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		msgs[i] = e.Error()
	}
	return pod, "ignored: " + strings.Join(msgs, "; "), nil
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
