package podspec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// EnvSource gives the ConfigMaps and Secrets that containers take
// environment variables from (env valueFrom configMapKeyRef/secretKeyRef,
// envFrom). It is called for each container creation (from the actors),
// and must be safe for concurrent use. An object that does not exist is an
// error for which k8s.io/apimachinery/pkg/api/errors.IsNotFound is true
// (what client-go returns); any other error is a failure to read it.
//
// What it returns is only ever held in memory and handed to the runtime:
// it is never journaled.
type EnvSource interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// EnvVar is one variable of a container's environment.
type EnvVar struct {
	Name, Value string
}

// EnvInputs are what resolving a container's environment needs besides the
// pod.
type EnvInputs struct {
	// Source reads referenced ConfigMaps and Secrets. Nil is a node without
	// an API server: a reference to one then fails, unless it is optional.
	Source EnvSource
	// PodIPs returns the pod's IPs, the primary first; it is called only
	// for a status.podIP or status.podIPs fieldRef. Nil: no IPs.
	PodIPs func(ctx context.Context) ([]string, error)
	// HostIPs are the node's IPs, the primary first.
	HostIPs []string
	// Allocatable is the node's allocatable resources: a resourceFieldRef
	// to a cpu, memory or ephemeral-storage limit the container does not
	// set reads it instead, as the kubelet does.
	Allocatable corev1.ResourceList
	// Services lists the cluster's Services for the service-link
	// variables (see serviceEnv). Nil: none, as a kubelet without an API
	// server.
	Services ServiceLister
}

// ContainerEnv is a container's environment as the kubelet builds it
// (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables):
//
//  1. envFrom, in order: every key of each configMapRef and secretRef,
//     with its prefix; a later source overrides an earlier one. A missing
//     object fails the container unless the reference is optional.
//  2. env, in order, overriding envFrom: a value has its $(VAR) references
//     expanded against what is defined so far (envFrom and the earlier
//     env entries; unknown references stay as written); a valueFrom is
//     resolved and taken as is: fieldRef, resourceFieldRef,
//     configMapKeyRef, secretKeyRef. A missing object or key fails the
//     container unless the reference is optional, in which case the
//     variable is left out.
//
// Variables come out in the order they were first defined. A failure is a
// *MissingRefError when an object or key does not exist; its message is
// the kubelet's and names the object, never a value.
//
//  3. the service-link variables (FOO_SERVICE_HOST, ..., see serviceEnv)
//     not defined by 1 or 2; a $(VAR) in an env value may refer to them.
//     Before the Services have been read once an API pod's container
//     fails with ErrServicesNotSynced (the kubelet's rule), to be retried.
//
// The result holds secret values: keep it in memory and give it only to
// the runtime.
func ContainerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, in EnvInputs) (Env, error) {
	r := &envResolver{pod: pod, c: c, in: in, cms: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	return r.resolve(ctx)
}

// Env is a resolved container environment.
type Env struct {
	Vars []EnvVar
	// Skipped are envFrom keys left out because they cannot be environment
	// variable names (see validEnvName); the API server never lets such
	// keys in, so it is reported, not fatal.
	Skipped []string
}

// Map returns the variables by name.
func (e Env) Map() map[string]string {
	m := make(map[string]string, len(e.Vars))
	for _, v := range e.Vars {
		m[v.Name] = v.Value
	}
	return m
}

// LiteralEnv is a container's environment from its literal env values
// alone (expanded as ContainerEnv does), leaving out envFrom and every
// valueFrom: for callers with nothing to resolve them from (benchmarks).
func LiteralEnv(c *corev1.Container) Env {
	var e envBuilder
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			e.set(v.Name, expand(v.Value, lookupIn(e.vals)))
		}
	}
	return Env{Vars: e.vars()}
}

// MissingRefError is a ConfigMap, Secret or key that a container's
// environment refers to and that does not exist.
type MissingRefError struct {
	// Kind is "configmap" or "secret".
	Kind            string
	Namespace, Name string
	// Key is the missing key; "" when the object itself is missing.
	Key string
	// Err is the source's error, if any.
	Err error
}

func (e *MissingRefError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s %q not found", e.Kind, e.Name)
	}
	kind := "ConfigMap"
	if e.Kind == "secret" {
		kind = "Secret"
	}
	return fmt.Sprintf("couldn't find key %s in %s %s/%s", e.Key, kind, e.Namespace, e.Name)
}

func (e *MissingRefError) Unwrap() error { return e.Err }

// errNoSource is the failure to read a reference on a node without an
// EnvSource.
var errNoSource = errors.New("no API server to read it from")

type envResolver struct {
	pod     *corev1.Pod
	c       *corev1.Container
	in      EnvInputs
	cms     map[string]*corev1.ConfigMap // by name; nil: optional and missing
	secrets map[string]*corev1.Secret
	podIPs  []string
	gotIPs  bool
}

func (r *envResolver) resolve(ctx context.Context) (Env, error) {
	var e envBuilder
	var skipped []string
	svc, err := serviceEnv(ctx, r.pod, r.in.Services)
	if err != nil {
		return Env{}, err
	}
	for _, from := range r.c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := r.configMap(ctx, from.ConfigMapRef.Name, isTrue(from.ConfigMapRef.Optional))
			if err != nil {
				return Env{}, err
			}
			if cm == nil {
				continue
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := r.secret(ctx, from.SecretRef.Name, isTrue(from.SecretRef.Optional))
			if err != nil {
				return Env{}, err
			}
			if s == nil {
				continue
			}
			data = make(map[string]string, len(s.Data))
			for k, v := range s.Data {
				data[k] = string(v)
			}
		default:
			continue
		}
		for _, k := range sortedKeys(data) {
			name := from.Prefix + k
			if !validEnvName(name) {
				skipped = append(skipped, name)
				continue
			}
			e.set(name, data[k])
		}
	}
	for i := range r.c.Env {
		v := &r.c.Env[i]
		if v.Value != "" || v.ValueFrom == nil {
			e.set(v.Name, expand(v.Value, lookupIn(e.vals, svc)))
			continue
		}
		val, ok, err := r.valueFrom(ctx, v.ValueFrom)
		if err != nil {
			return Env{}, err
		}
		if ok {
			e.set(v.Name, val)
		}
	}
	for _, k := range sortedKeys(svc) {
		if _, defined := e.vals[k]; !defined {
			e.set(k, svc[k])
		}
	}
	return Env{Vars: e.vars(), Skipped: skipped}, nil
}

// valueFrom resolves one source; ok is false for an optional reference
// that does not exist (the variable is then left out).
func (r *envResolver) valueFrom(ctx context.Context, src *corev1.EnvVarSource) (val string, ok bool, err error) {
	switch {
	case src.FieldRef != nil:
		val, err = r.field(ctx, src.FieldRef)
		return val, err == nil, err
	case src.ResourceFieldRef != nil:
		val, err = r.resourceField(src.ResourceFieldRef)
		return val, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		optional := isTrue(ref.Optional)
		cm, err := r.configMap(ctx, ref.Name, optional)
		if err != nil || cm == nil {
			return "", false, err
		}
		if val, ok = cm.Data[ref.Key]; !ok && !optional {
			return "", false, &MissingRefError{Kind: "configmap", Namespace: r.pod.Namespace, Name: ref.Name, Key: ref.Key}
		}
		return val, ok, nil
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		optional := isTrue(ref.Optional)
		s, err := r.secret(ctx, ref.Name, optional)
		if err != nil || s == nil {
			return "", false, err
		}
		b, ok := s.Data[ref.Key]
		if !ok && !optional {
			return "", false, &MissingRefError{Kind: "secret", Namespace: r.pod.Namespace, Name: ref.Name, Key: ref.Key}
		}
		return string(b), ok, nil
	default:
		// A source this version does not know (fileKeyRef): the kubelet
		// without that feature leaves the variable empty.
		return "", true, nil
	}
}

// configMap reads a ConfigMap of the pod's namespace once per container;
// nil, nil is an optional one that does not exist.
func (r *envResolver) configMap(ctx context.Context, name string, optional bool) (*corev1.ConfigMap, error) {
	var get func(context.Context, string, string) (*corev1.ConfigMap, error)
	if r.in.Source != nil {
		get = r.in.Source.ConfigMap
	}
	return fetchOnce(ctx, r, r.cms, "configmap", "configMap", name, optional, get)
}

// secret is configMap for Secrets.
func (r *envResolver) secret(ctx context.Context, name string, optional bool) (*corev1.Secret, error) {
	var get func(context.Context, string, string) (*corev1.Secret, error)
	if r.in.Source != nil {
		get = r.in.Source.Secret
	}
	return fetchOnce(ctx, r, r.secrets, "secret", "secret", name, optional, get)
}

// fetchOnce reads the object name of the pod's namespace with get (nil: no
// API server) unless cache has it, and caches what it read; nil, nil is an
// optional object that does not exist. kind names it in a MissingRefError,
// label in other errors (the kubelet's words).
func fetchOnce[T any](ctx context.Context, r *envResolver, cache map[string]*T, kind, label, name string, optional bool,
	get func(context.Context, string, string) (*T, error)) (*T, error) {
	if obj, ok := cache[name]; ok {
		return obj, nil
	}
	if get == nil {
		if optional {
			return nil, nil
		}
		return nil, fmt.Errorf("couldn't get %s %s/%s: %w", label, r.pod.Namespace, name, errNoSource)
	}
	obj, err := get(ctx, r.pod.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		if !optional {
			return nil, &MissingRefError{Kind: kind, Namespace: r.pod.Namespace, Name: name, Err: err}
		}
		obj = nil
	case err != nil:
		return nil, fmt.Errorf("couldn't get %s %s/%s: %w", label, r.pod.Namespace, name, err)
	}
	cache[name] = obj
	return obj, nil
}

// field resolves a fieldRef (the paths the API server accepts for env,
// plus metadata.labels and metadata.annotations as a whole, which the
// kubelet also formats).
func (r *envResolver) field(ctx context.Context, ref *corev1.ObjectFieldSelector) (string, error) {
	if ref.APIVersion != "" && ref.APIVersion != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", ref.APIVersion)
	}
	pod := r.pod
	if v, ok := PodMetadataField(pod, ref.FieldPath); ok {
		return v, nil
	}
	if _, _, ok := splitSubscript(ref.FieldPath); ok {
		return "", fmt.Errorf("fieldPath %q does not support subscript", ref.FieldPath)
	}
	switch ref.FieldPath {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		if len(r.in.HostIPs) == 0 {
			return "", nil
		}
		return r.in.HostIPs[0], nil
	case "status.hostIPs":
		return strings.Join(r.in.HostIPs, ","), nil
	case "status.podIP", "status.podIPs":
		ips, err := r.ips(ctx)
		if err != nil {
			return "", err
		}
		if ref.FieldPath == "status.podIPs" {
			return strings.Join(ips, ","), nil
		}
		if len(ips) == 0 {
			return "", nil
		}
		return ips[0], nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", ref.FieldPath)
}

// ips returns the pod's IPs, asked for once.
func (r *envResolver) ips(ctx context.Context) ([]string, error) {
	if r.gotIPs || r.in.PodIPs == nil {
		return r.podIPs, nil
	}
	ips, err := r.in.PodIPs(ctx)
	if err != nil {
		return nil, fmt.Errorf("pod IPs: %w", err)
	}
	r.podIPs, r.gotIPs = ips, true
	return ips, nil
}

// resourceField resolves a resourceFieldRef: the container's (or the named
// container's) request or limit, divided by the divisor (default 1) and
// rounded up. A cpu, memory or ephemeral-storage limit that is not set (or
// zero) is the node's allocatable, as the kubelet defaults it.
func (r *envResolver) resourceField(ref *corev1.ResourceFieldSelector) (string, error) {
	c := r.c
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		if c = podContainer(r.pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("container %s not found", ref.ContainerName)
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
	}
	res := corev1.ResourceName(name)
	switch {
	case res == corev1.ResourceCPU, res == corev1.ResourceMemory, res == corev1.ResourceEphemeralStorage,
		strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
	default:
		return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
	}
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else {
		q = c.Resources.Limits[res]
		if q.IsZero() && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
			if alloc, ok := r.in.Allocatable[res]; ok {
				q = alloc
			}
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == corev1.ResourceCPU {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

// envBuilder is an environment under construction: names keep the place
// of their first definition, values the last.
type envBuilder struct {
	names []string
	vals  map[string]string
}

func (e *envBuilder) set(name, value string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[name]; !ok {
		e.names = append(e.names, name)
	}
	e.vals[name] = value
}

func (e *envBuilder) vars() []EnvVar {
	out := make([]EnvVar, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, EnvVar{Name: n, Value: e.vals[n]})
	}
	return out
}

// validEnvName reports whether name can be an environment variable's name:
// not empty, printable ASCII, no '=' (the API server's rule since relaxed
// environment variable validation; every ConfigMap and Secret key it
// admits passes, with any prefix it admits). The kubelet once also skipped
// keys that were not C identifiers; since that rule was relaxed it skips
// nothing, and neither does this for objects from an API server.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c > '~' || c == '=' {
			return false
		}
	}
	return true
}

// splitSubscript splits "metadata.labels['key']" into its path and key.
func splitSubscript(fieldPath string) (path, key string, ok bool) {
	s, found := strings.CutSuffix(fieldPath, "']")
	if !found {
		return "", "", false
	}
	path, key, ok = strings.Cut(s, "['")
	if !ok || path == "" {
		return "", "", false
	}
	return path, key, true
}

// PodMetadataField is the value of a downward API fieldPath into the pod's
// metadata, as both environment variables and downwardAPI volume files
// have it: metadata.name, namespace, uid, labels and annotations (sorted
// key="value" lines), or one label or annotation (metadata.labels['k']).
// ok is false for any other path.
func PodMetadataField(pod *corev1.Pod, fieldPath string) (value string, ok bool) {
	if path, key, sub := splitSubscript(fieldPath); sub {
		switch path {
		case "metadata.labels":
			return pod.Labels[key], true
		case "metadata.annotations":
			return pod.Annotations[key], true
		}
		return "", false
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	case "metadata.labels":
		return formatMap(pod.Labels), true
	case "metadata.annotations":
		return formatMap(pod.Annotations), true
	}
	return "", false
}

// formatMap formats labels or annotations as the downward API does: sorted
// key="value" lines.
func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// podContainer finds a container or init container by name.
func podContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		if i := slices.IndexFunc(list, func(c corev1.Container) bool { return c.Name == name }); i >= 0 {
			return &list[i]
		}
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }
