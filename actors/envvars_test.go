package actors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// fakeEnvSource is an EnvSource over maps keyed "namespace/name"; objects
// can be added while it is in use.
type fakeEnvSource struct {
	mu      sync.Mutex
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
	err     error // returned by every call when set
	gets    int
}

func newFakeEnvSource() *fakeEnvSource {
	return &fakeEnvSource{cms: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

func (f *fakeEnvSource) putConfigMap(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cms[ns+"/"+name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func (f *fakeEnvSource) putSecret(ns, name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	f.secrets[ns+"/"+name] = s
}

func (f *fakeEnvSource) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.cms[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeEnvSource) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func ptr[T any](v T) *T { return &v }

func cmKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr(optional)}}
}

func secretKey(name, key string, optional bool) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr(optional)}}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

func resourceRef(container, res, divisor string) *corev1.EnvVarSource {
	ref := &corev1.ResourceFieldSelector{ContainerName: container, Resource: res}
	if divisor != "" {
		ref.Divisor = resource.MustParse(divisor)
	}
	return &corev1.EnvVarSource{ResourceFieldRef: ref}
}

func cmFrom(name, prefix string, optional bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{Prefix: prefix, ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: ptr(optional)}}
}

func secretFrom(name, prefix string, optional bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{Prefix: prefix, SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: ptr(optional)}}
}

// envString renders an environment as "K=V K=V" in its order.
func envString(vars []EnvVar) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = v.Name + "=" + v.Value
	}
	return strings.Join(parts, " ")
}

func envTestPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1",
			Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "a \"b\""}},
		Spec: corev1.PodSpec{NodeName: "node-1", ServiceAccountName: "sa",
			Containers: []corev1.Container{
				{Name: "app", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("100Mi"),
						"hugepages-2Mi": resource.MustParse("4Mi")},
				}},
				{Name: "side", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}},
			},
			InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}},
		},
	}
}

func TestContainerEnv(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}
	cases := []struct {
		name    string
		env     []corev1.EnvVar
		envFrom []corev1.EnvFromSource
		noSrc   bool   // a node without an API server
		want    string // the environment, or
		wantErr string // the error's message
		missing bool   // the error is a *MissingRefError
		skipped []string
	}{
		{name: "literal values expanded in order",
			env: []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "B", Value: "$(A)-$(C)"}, {Name: "C", Value: "c"},
				{Name: "D", Value: "$$(A) $(A)"}, {Name: "E"}},
			want: "A=a B=a-$(C) C=c D=$(A) a E="},
		{name: "a name defined twice keeps its first place and its last value",
			env:  []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "A", Value: "$(A)3"}},
			want: "A=13 B=2"},
		{name: "envFrom with prefixes, env overrides it in place",
			envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false), secretFrom("sec", "S_", false)},
			env:     []corev1.EnvVar{{Name: "HOST", Value: "override-$(PORT)"}, {Name: "X", Value: "$(S_token)"}},
			want:    "HOST=override-80 PORT=80 S_ref=$(A) S_token=t0k S_user=u X=t0k"},
		{name: "a later envFrom source overrides an earlier one",
			envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false), cmFrom("cfg2", "", false)},
			want:    "HOST=h2 PORT=80 EXTRA=e"},
		{name: "optional envFrom sources that do not exist are skipped",
			envFrom: []corev1.EnvFromSource{cmFrom("nope", "", true), secretFrom("nope", "", true)},
			env:     []corev1.EnvVar{{Name: "A", Value: "a"}},
			want:    "A=a"},
		{name: "envFrom configmap missing",
			envFrom: []corev1.EnvFromSource{cmFrom("nope", "", false)},
			wantErr: `configmap "nope" not found`, missing: true},
		{name: "envFrom secret missing",
			envFrom: []corev1.EnvFromSource{secretFrom("nope", "", false)},
			wantErr: `secret "nope" not found`, missing: true},
		{name: "envFrom keys that cannot be names are skipped",
			envFrom: []corev1.EnvFromSource{cmFrom("odd", "", false)},
			want:    "1starts-with.digit=ok good=g", skipped: []string{"bad=key"}},
		{name: "configMapKeyRef and secretKeyRef",
			env:  []corev1.EnvVar{{Name: "H", ValueFrom: cmKey("cfg", "HOST", false)}, {Name: "P", ValueFrom: secretKey("sec", "token", false)}},
			want: "H=h P=t0k"},
		{name: "resolved values are not expanded",
			env:  []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "R", ValueFrom: secretKey("sec", "ref", false)}, {Name: "F", Value: "$(R)"}},
			want: "A=a R=$(A) F=$(A)"},
		{name: "configmap missing",
			env:     []corev1.EnvVar{{Name: "H", ValueFrom: cmKey("nope", "HOST", false)}},
			wantErr: `configmap "nope" not found`, missing: true},
		{name: "configmap key missing",
			env:     []corev1.EnvVar{{Name: "H", ValueFrom: cmKey("cfg", "k", false)}},
			wantErr: `couldn't find key k in ConfigMap ns/cfg`, missing: true},
		{name: "secret missing",
			env:     []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("nope", "token", false)}},
			wantErr: `secret "nope" not found`, missing: true},
		{name: "secret key missing",
			env:     []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("sec", "k", false)}},
			wantErr: `couldn't find key k in Secret ns/sec`, missing: true},
		{name: "optional references that do not resolve leave the variable out",
			env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("nope", "k", true)}, {Name: "B", ValueFrom: cmKey("cfg", "k", true)},
				{Name: "C", ValueFrom: secretKey("nope", "k", true)}, {Name: "D", ValueFrom: secretKey("sec", "k", true)}, {Name: "E", Value: "$(A)"}},
			want: "E=$(A)"},
		{name: "no API server: a reference fails",
			noSrc: true, env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("sec", "token", false)}},
			wantErr: "couldn't get secret ns/sec: no API server to read it from"},
		{name: "no API server: envFrom configmap fails",
			noSrc: true, envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false)},
			wantErr: "couldn't get configMap ns/cfg: no API server to read it from"},
		{name: "no API server: optional references are left out",
			noSrc: true, env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("sec", "token", true)}, {Name: "A", Value: "a"}},
			envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", true)},
			want:    "A=a"},
		{name: "fieldRefs",
			env: []corev1.EnvVar{
				{Name: "NAME", ValueFrom: fieldRef("metadata.name")},
				{Name: "NS", ValueFrom: fieldRef("metadata.namespace")},
				{Name: "UID", ValueFrom: fieldRef("metadata.uid")},
				{Name: "APP", ValueFrom: fieldRef("metadata.labels['app']")},
				{Name: "NONE", ValueFrom: fieldRef("metadata.labels['none']")},
				{Name: "NOTE", ValueFrom: fieldRef("metadata.annotations['note']")},
				{Name: "NODE", ValueFrom: fieldRef("spec.nodeName")},
				{Name: "SA", ValueFrom: fieldRef("spec.serviceAccountName")},
				{Name: "HOST_IP", ValueFrom: fieldRef("status.hostIP")},
				{Name: "HOST_IPS", ValueFrom: fieldRef("status.hostIPs")},
				{Name: "POD_IP", ValueFrom: fieldRef("status.podIP")},
				{Name: "POD_IPS", ValueFrom: fieldRef("status.podIPs")},
				{Name: "URL", Value: "http://$(POD_IP):80/$(NAME)"},
			},
			want: `NAME=web NS=ns UID=uid-1 APP=web NONE= NOTE=a "b" NODE=node-1 SA=sa HOST_IP=192.168.1.10 ` +
				`HOST_IPS=192.168.1.10,fd00::10 POD_IP=10.88.0.5 POD_IPS=10.88.0.5,fd00:88::5 URL=http://10.88.0.5:80/web`},
		{name: "fieldRef to all labels",
			env:  []corev1.EnvVar{{Name: "L", ValueFrom: fieldRef("metadata.labels")}},
			want: "L=app=\"web\"\ntier=\"front\""},
		{name: "fieldRef with an unsupported path",
			env:     []corev1.EnvVar{{Name: "X", ValueFrom: fieldRef("spec.restartPolicy")}},
			wantErr: "unsupported fieldPath: spec.restartPolicy"},
		{name: "fieldRef with a subscript on a path without one",
			env:     []corev1.EnvVar{{Name: "X", ValueFrom: fieldRef("metadata.name['x']")}},
			wantErr: `fieldPath "metadata.name['x']" does not support subscript`},
		{name: "fieldRef of another API version",
			env:     []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}}}},
			wantErr: "unsupported pod version: v2"},
		{name: "resourceFieldRefs",
			env: []corev1.EnvVar{
				{Name: "CPU_LIMIT", ValueFrom: resourceRef("", "limits.cpu", "")},
				{Name: "CPU_LIMIT_M", ValueFrom: resourceRef("", "limits.cpu", "1m")},
				{Name: "CPU_REQ", ValueFrom: resourceRef("app", "requests.cpu", "")},
				{Name: "CPU_REQ_M", ValueFrom: resourceRef("", "requests.cpu", "1m")},
				{Name: "MEM_LIMIT_MI", ValueFrom: resourceRef("", "limits.memory", "1Mi")},
				{Name: "MEM_REQ", ValueFrom: resourceRef("", "requests.memory", "")},
				{Name: "MEM_REQ_G", ValueFrom: resourceRef("", "requests.memory", "1G")},
				{Name: "EPH_LIMIT_GI", ValueFrom: resourceRef("", "limits.ephemeral-storage", "1Gi")},
				{Name: "EPH_REQ", ValueFrom: resourceRef("", "requests.ephemeral-storage", "")},
				{Name: "HP_LIMIT", ValueFrom: resourceRef("", "limits.hugepages-2Mi", "1Mi")},
				{Name: "SIDE_CPU_LIMIT", ValueFrom: resourceRef("side", "limits.cpu", "")},
				{Name: "SIDE_MEM_LIMIT", ValueFrom: resourceRef("side", "limits.memory", "1Mi")},
				{Name: "INIT_CPU_REQ", ValueFrom: resourceRef("init", "requests.cpu", "1m")},
			},
			want: "CPU_LIMIT=2 CPU_LIMIT_M=1500 CPU_REQ=1 CPU_REQ_M=250 MEM_LIMIT_MI=100 MEM_REQ=67108864 MEM_REQ_G=1 " +
				"EPH_LIMIT_GI=10 EPH_REQ=0 HP_LIMIT=4 SIDE_CPU_LIMIT=4 SIDE_MEM_LIMIT=1024 INIT_CPU_REQ=2000"},
		{name: "resourceFieldRef to an unknown container",
			env:     []corev1.EnvVar{{Name: "X", ValueFrom: resourceRef("nope", "limits.cpu", "")}},
			wantErr: "container nope not found"},
		{name: "resourceFieldRef to an unsupported resource",
			env:     []corev1.EnvVar{{Name: "X", ValueFrom: resourceRef("", "limits.gpu", "")}},
			wantErr: "unsupported container resource: limits.gpu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newFakeEnvSource()
			src.putConfigMap("ns", "cfg", map[string]string{"HOST": "h", "PORT": "80"})
			src.putConfigMap("ns", "cfg2", map[string]string{"HOST": "h2", "EXTRA": "e"})
			src.putConfigMap("ns", "odd", map[string]string{"good": "g", "1starts-with.digit": "ok", "bad=key": "x"})
			src.putSecret("ns", "sec", map[string]string{"token": "t0k", "user": "u", "ref": "$(A)"})
			src.putSecret("other", "sec", map[string]string{"token": "other-namespace"})
			pod := envTestPod()
			ctr := &pod.Spec.Containers[0]
			ctr.Env, ctr.EnvFrom = c.env, c.envFrom
			in := EnvInputs{Source: src, HostIPs: []string{"192.168.1.10", "fd00::10"}, Allocatable: allocatable,
				PodIPs: func(context.Context) ([]string, error) { return []string{"10.88.0.5", "fd00:88::5"}, nil }}
			if c.noSrc {
				in.Source = nil
			}
			env, err := ContainerEnv(context.Background(), pod, ctr, in)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error = %v, want %q", err, c.wantErr)
				}
				var missing *MissingRefError
				if errors.As(err, &missing) != c.missing {
					t.Errorf("errors.As(%v, *MissingRefError) = %v, want %v", err, !c.missing, c.missing)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := envString(env.Vars); got != c.want {
				t.Errorf("env:\n got %s\nwant %s", got, c.want)
			}
			if !slices.Equal(env.Skipped, c.skipped) {
				t.Errorf("skipped %q, want %q", env.Skipped, c.skipped)
			}
		})
	}
}

// TestContainerEnvReadsEachObjectOnce: a container referring to one object
// many times reads it once, and asks for the pod's IPs only when a fieldRef
// wants them, once.
func TestContainerEnvReadsEachObjectOnce(t *testing.T) {
	src := newFakeEnvSource()
	src.putConfigMap("ns", "cfg", map[string]string{"A": "a", "B": "b"})
	pod := envTestPod()
	ctr := &pod.Spec.Containers[0]
	ctr.EnvFrom = []corev1.EnvFromSource{cmFrom("cfg", "", false), cmFrom("cfg", "X_", false)}
	ctr.Env = []corev1.EnvVar{{Name: "A2", ValueFrom: cmKey("cfg", "A", false)}, {Name: "B2", ValueFrom: cmKey("cfg", "B", false)},
		{Name: "M1", ValueFrom: cmKey("missing", "A", true)}, {Name: "M2", ValueFrom: cmKey("missing", "B", true)}}
	ipCalls := 0
	in := EnvInputs{Source: src, PodIPs: func(context.Context) ([]string, error) { ipCalls++; return []string{"10.0.0.1"}, nil }}
	if _, err := ContainerEnv(context.Background(), pod, ctr, in); err != nil {
		t.Fatal(err)
	}
	if src.gets != 2 || ipCalls != 0 {
		t.Errorf("%d gets (want 2: cfg, missing) and %d IP lookups (want 0)", src.gets, ipCalls)
	}
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "IP", ValueFrom: fieldRef("status.podIP")}, corev1.EnvVar{Name: "IPS", ValueFrom: fieldRef("status.podIPs")})
	if _, err := ContainerEnv(context.Background(), pod, ctr, in); err != nil {
		t.Fatal(err)
	}
	if ipCalls != 1 {
		t.Errorf("%d IP lookups, want 1", ipCalls)
	}
}

// TestContainerEnvSourceErrors: an error other than NotFound fails even an
// optional reference, wrapped, and is not a MissingRefError; so does a
// failure to learn the pod's IPs.
func TestContainerEnvSourceErrors(t *testing.T) {
	boom := errors.New("connection refused")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "sec", errors.New("no relationship found"))
	cases := []struct {
		name    string
		srcErr  error
		ipErr   error
		env     []corev1.EnvVar
		wantErr string
		is      error
	}{
		{"configmap unreachable", boom, nil, []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cfg", "A", true)}},
			"couldn't get configMap ns/cfg: connection refused", boom},
		{"secret forbidden", forbidden, nil, []corev1.EnvVar{{Name: "A", ValueFrom: secretKey("sec", "A", true)}},
			"couldn't get secret ns/sec: " + forbidden.Error(), forbidden},
		{"pod IPs unknown", nil, boom, []corev1.EnvVar{{Name: "IP", ValueFrom: fieldRef("status.podIP")}},
			"pod IPs: connection refused", boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := newFakeEnvSource()
			src.err = c.srcErr
			pod := envTestPod()
			ctr := &pod.Spec.Containers[0]
			ctr.Env = c.env
			in := EnvInputs{Source: src, PodIPs: func(context.Context) ([]string, error) { return nil, c.ipErr }}
			_, err := ContainerEnv(context.Background(), pod, ctr, in)
			if err == nil || err.Error() != c.wantErr || !errors.Is(err, c.is) {
				t.Fatalf("error = %v, want %q wrapping %v", err, c.wantErr, c.is)
			}
			var missing *MissingRefError
			if errors.As(err, &missing) {
				t.Errorf("%v is a MissingRefError", err)
			}
		})
	}
}

func TestMissingRefErrorUnwraps(t *testing.T) {
	src := newFakeEnvSource()
	pod := envTestPod()
	ctr := &pod.Spec.Containers[0]
	ctr.Env = []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("cfg", "A", false)}}
	_, err := ContainerEnv(context.Background(), pod, ctr, EnvInputs{Source: src})
	if !apierrors.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false: the source's error is not kept", err)
	}
}

func TestLiteralEnv(t *testing.T) {
	c := &corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "S", ValueFrom: secretKey("s", "k", false)},
		{Name: "B", Value: "$(A)$(S)"}}}
	if got, want := envString(LiteralEnv(c).Vars), "A=a B=a$(S)"; got != want {
		t.Errorf("LiteralEnv = %s, want %s", got, want)
	}
}

func TestContainerConfigExpandsCommandAndArgs(t *testing.T) {
	pod := envTestPod()
	c := &corev1.Container{Name: "app", Command: []string{"/bin/$(BIN)", "$(MISSING)"}, Args: []string{"--port=$(PORT)", "$$(PORT)"}}
	env := Env{Vars: []EnvVar{{"BIN", "server"}, {"PORT", "8080"}, {"SECRET", "s3"}}}
	cfg := ContainerConfigWithOptions(pod, c, 1, env, PodConfigOptions{})
	if got, want := strings.Join(cfg.Command, " "), "/bin/server $(MISSING)"; got != want {
		t.Errorf("command %q, want %q", got, want)
	}
	if got, want := strings.Join(cfg.Args, " "), "--port=8080 $(PORT)"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	var got []string
	for _, kv := range cfg.Envs {
		got = append(got, fmt.Sprintf("%s=%s", kv.Key, kv.Value))
	}
	if want := []string{"BIN=server", "PORT=8080", "SECRET=s3"}; !slices.Equal(got, want) {
		t.Errorf("envs %q, want %q", got, want)
	}
	if c.Args[0] != "--port=$(PORT)" {
		t.Errorf("the spec's args were changed: %q", c.Args)
	}
}

// createCapture records the configs of the containers created through it.
type createCapture struct {
	Runtime
	mu      sync.Mutex
	configs []*runtimeapi.ContainerConfig
}

func (c *createCapture) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sbCfg *runtimeapi.PodSandboxConfig) (string, error) {
	c.mu.Lock()
	c.configs = append(c.configs, proto.Clone(cfg).(*runtimeapi.ContainerConfig))
	c.mu.Unlock()
	return c.Runtime.CreateContainer(ctx, sandboxID, cfg, sbCfg)
}

func (c *createCapture) created() []*runtimeapi.ContainerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.configs)
}

func envOf(cfg *runtimeapi.ContainerConfig) map[string]string {
	m := map[string]string{}
	for _, kv := range cfg.GetEnvs() {
		m[kv.Key] = string(kv.Value)
	}
	return m
}

// fastRetries is a lifecycle whose back-offs take milliseconds.
func fastRetries() lifecycle.Config {
	lc := lifecycle.DefaultConfig()
	lc.BackoffInitial, lc.BackoffMax = 10*time.Millisecond, 100*time.Millisecond
	return lc
}

// waitingReason is the first container's waiting reason and message.
func waitingReason(u PodUpdate) (reason, msg string) {
	if u.Status == nil || len(u.Status.ContainerStatuses) == 0 || u.Status.ContainerStatuses[0].State.Waiting == nil {
		return "", ""
	}
	w := u.Status.ContainerStatuses[0].State.Waiting
	return w.Reason, w.Message
}

func running(u PodUpdate) bool {
	return u.Status != nil && u.Status.Phase == corev1.PodRunning && len(u.Status.ContainerStatuses) > 0 &&
		u.Status.ContainerStatuses[0].State.Running != nil
}

// TestMissingReferenceRetriedUntilItAppears: a container whose ConfigMap
// does not exist yet waits in CreateContainerConfigError with the kubelet's
// message, is retried with back-off without the runtime being asked to
// create anything, and starts once the ConfigMap appears, with its value and
// a restart count of 0. The same holds for a missing Secret key.
func TestMissingReferenceRetriedUntilItAppears(t *testing.T) {
	cases := []struct {
		name    string
		env     corev1.EnvVar
		wantMsg string
		appear  func(*fakeEnvSource)
	}{
		{"configmap", corev1.EnvVar{Name: "LEVEL", ValueFrom: cmKey("cfg", "level", false)}, `configmap "cfg" not found`,
			func(s *fakeEnvSource) { s.putConfigMap("default", "cfg", map[string]string{"level": "debug"}) }},
		{"secret key", corev1.EnvVar{Name: "LEVEL", ValueFrom: secretKey("sec", "level", false)}, `couldn't find key level in Secret default/sec`,
			func(s *fakeEnvSource) {
				s.putSecret("default", "sec", map[string]string{"other": "x", "level": "debug"})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, client := newSim(t)
			rt := &createCapture{Runtime: client}
			src := newFakeEnvSource()
			src.putSecret("default", "sec", map[string]string{"other": "x"})
			j := &memJournal{streams: map[string][]*pb.Envelope{}}
			st := &statusLog{last: map[string]PodUpdate{}}
			system, sup := startSupervisor(t, Deps{Journal: j, Runtime: rt, Lister: CRILister{Client: client}, Status: st,
				EnvSource: src, Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, j)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
					Env: []corev1.EnvVar{c.env}}}}}
			system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})

			waitUntil(t, "CreateContainerConfigError", func() bool {
				u, _ := st.get("uid-p")
				reason, msg := waitingReason(u)
				return reason == "CreateContainerConfigError" && msg == c.wantMsg
			})
			// Retried: the failures' reads keep coming, never a create.
			src.mu.Lock()
			before := src.gets
			src.mu.Unlock()
			waitUntil(t, "a retry", func() bool {
				src.mu.Lock()
				defer src.mu.Unlock()
				return src.gets >= before+2
			})
			if n := len(rt.created()); n != 0 {
				t.Fatalf("%d containers created while the reference was missing", n)
			}
			c.appear(src)
			waitUntil(t, "pod Running", func() bool {
				u, _ := st.get("uid-p")
				return running(u)
			})
			u, _ := st.get("uid-p")
			if rc := u.Status.ContainerStatuses[0].RestartCount; rc != 0 {
				t.Errorf("restart count %d after config errors, want 0", rc)
			}
			created := rt.created()
			if len(created) != 1 || envOf(created[0])["LEVEL"] != "debug" {
				t.Fatalf("created %d containers, env %v", len(created), envOf(created[len(created)-1]))
			}
		})
	}
}

// TestSecretValuesNeverJournaled creates containers with secret-derived
// environment (secretKeyRef, envFrom secretRef, a command expanding a secret)
// through the actor path with a real bbolt journal, a failed attempt first,
// and looks for the secret values in the journal's bytes. As a control, a
// literal value of the spec, which the journal does hold, must be found.
func TestSecretValuesNeverJournaled(t *testing.T) {
	const (
		password  = "pa55-Zq8vX1-never-on-disk"
		apiKey    = "key-Hh37Lw0-never-on-disk"
		literal   = "literal-Tt91-in-the-spec"
		keyLater  = "token-Mm44-added-later"
		secretPod = "uid-secret"
	)
	dir := t.TempDir()
	j, err := journal.Open(context.Background(), dir, journal.Options{NoSync: true, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	load := func(ctx context.Context, uid string) (*lifecycle.State, error) {
		s, err := j.Load(ctx, uid)
		if errors.Is(err, journal.ErrNotFound) {
			return lifecycle.NewState(uid), nil
		}
		if err != nil {
			return nil, err
		}
		return Restore(uid, s.Snapshot, s.Events)
	}
	_, client := newSim(t)
	rt := &createCapture{Runtime: client}
	src := newFakeEnvSource()
	src.putSecret("default", "db", map[string]string{"password": password})
	src.putSecret("default", "api", map[string]string{"KEY": apiKey})
	st := &statusLog{last: map[string]PodUpdate{}}
	system := actor.NewActorSystem()
	sup, err := system.Root.SpawnNamed(NewSupervisorProps(Deps{Journal: j, Runtime: rt, Lister: CRILister{Client: client}, Status: st,
		EnvSource: src, Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, load, &Recovery{}), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: secretPod},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/app", "--password=$(DB_PASSWORD)"},
			EnvFrom: []corev1.EnvFromSource{secretFrom("api", "API_", false)},
			Env: []corev1.EnvVar{
				{Name: "LITERAL", Value: literal},
				{Name: "DB_PASSWORD", ValueFrom: secretKey("db", "password", false)},
				// Missing at first: the first attempts fail with the other
				// secrets already read.
				{Name: "TOKEN", ValueFrom: secretKey("db", "token", false)},
			}}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "CreateContainerConfigError", func() bool {
		u, _ := st.get(secretPod)
		reason, _ := waitingReason(u)
		return reason == "CreateContainerConfigError"
	})
	src.putSecret("default", "db", map[string]string{"password": password, "token": keyLater})
	waitUntil(t, "pod Running", func() bool {
		u, _ := st.get(secretPod)
		return running(u)
	})

	// The runtime got the values.
	created := rt.created()
	if len(created) != 1 {
		t.Fatalf("%d containers created, want 1", len(created))
	}
	env := envOf(created[0])
	if env["DB_PASSWORD"] != password || env["API_KEY"] != apiKey || env["TOKEN"] != keyLater || env["LITERAL"] != literal {
		t.Fatalf("the runtime got env %v", env)
	}
	if got := strings.Join(created[0].Command, " "); got != "/app --password="+password {
		t.Fatalf("the runtime got command %q", got)
	}

	system.Shutdown()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		if f.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(literal)) {
		t.Fatalf("the journal (%d bytes in %d files) lacks the spec's literal value: this test cannot see what is journaled", len(all), len(files))
	}
	if !bytes.Contains(all, []byte("couldn't find key token in Secret default/db")) {
		t.Errorf("the journal lacks the failed attempt's message: the failure path was not journaled")
	}
	for _, secret := range []string{password, apiKey, keyLater} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("secret value %q found in the journal", secret)
		}
	}
}

// TestConfigErrorKind: an environment that cannot be built is a definitive
// failure, reported to the core, unless its cause is a runtime error of a
// retryable kind; its message is its cause's.
func TestConfigErrorKind(t *testing.T) {
	missing := &MissingRefError{Kind: "configmap", Namespace: "ns", Name: "cfg"}
	unavailable := fmt.Errorf("pod IPs: %w", &cri.Error{Op: "PodSandboxStatus", ID: "sb", Kind: cri.Unavailable, Err: errors.New("connection refused")})
	cases := []struct {
		cause     error
		kind      cri.Kind
		retryable bool
	}{
		{missing, cri.FailedPrecondition, false},
		{fmt.Errorf("couldn't get secret ns/s: %w", context.DeadlineExceeded), cri.FailedPrecondition, false},
		{unavailable, cri.Unavailable, true},
	}
	for _, c := range cases {
		err := &configError{err: c.cause}
		if got := cri.KindOf(err); got != c.kind || cri.Retryable(err) != c.retryable {
			t.Errorf("KindOf(%v) = %v (retryable %v), want %v (%v)", err, got, cri.Retryable(err), c.kind, c.retryable)
		}
		if err.Error() != c.cause.Error() {
			t.Errorf("message %q, want the cause's %q", err.Error(), c.cause.Error())
		}
		if !errors.Is(err, c.cause) {
			t.Errorf("%v does not wrap its cause", err)
		}
	}
}
