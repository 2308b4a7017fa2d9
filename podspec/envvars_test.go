package podspec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/actorlet/actorlet/podspec/podspectest"
)

func ptr[T any](v T) *T { return &v }

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
			envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false), podspectest.SecretFrom("sec", "S_", false)},
			env:     []corev1.EnvVar{{Name: "HOST", Value: "override-$(PORT)"}, {Name: "X", Value: "$(S_token)"}},
			want:    "HOST=override-80 PORT=80 S_ref=$(A) S_token=t0k S_user=u X=t0k"},
		{name: "a later envFrom source overrides an earlier one",
			envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false), cmFrom("cfg2", "", false)},
			want:    "HOST=h2 PORT=80 EXTRA=e"},
		{name: "optional envFrom sources that do not exist are skipped",
			envFrom: []corev1.EnvFromSource{cmFrom("nope", "", true), podspectest.SecretFrom("nope", "", true)},
			env:     []corev1.EnvVar{{Name: "A", Value: "a"}},
			want:    "A=a"},
		{name: "envFrom configmap missing",
			envFrom: []corev1.EnvFromSource{cmFrom("nope", "", false)},
			wantErr: `configmap "nope" not found`, missing: true},
		{name: "envFrom secret missing",
			envFrom: []corev1.EnvFromSource{podspectest.SecretFrom("nope", "", false)},
			wantErr: `secret "nope" not found`, missing: true},
		{name: "envFrom keys that cannot be names are skipped",
			envFrom: []corev1.EnvFromSource{cmFrom("odd", "", false)},
			want:    "1starts-with.digit=ok good=g", skipped: []string{"bad=key"}},
		{name: "configMapKeyRef and secretKeyRef",
			env:  []corev1.EnvVar{{Name: "H", ValueFrom: podspectest.ConfigMapKey("cfg", "HOST", false)}, {Name: "P", ValueFrom: podspectest.SecretKey("sec", "token", false)}},
			want: "H=h P=t0k"},
		{name: "resolved values are not expanded",
			env:  []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "R", ValueFrom: podspectest.SecretKey("sec", "ref", false)}, {Name: "F", Value: "$(R)"}},
			want: "A=a R=$(A) F=$(A)"},
		{name: "configmap missing",
			env:     []corev1.EnvVar{{Name: "H", ValueFrom: podspectest.ConfigMapKey("nope", "HOST", false)}},
			wantErr: `configmap "nope" not found`, missing: true},
		{name: "configmap key missing",
			env:     []corev1.EnvVar{{Name: "H", ValueFrom: podspectest.ConfigMapKey("cfg", "k", false)}},
			wantErr: `couldn't find key k in ConfigMap ns/cfg`, missing: true},
		{name: "secret missing",
			env:     []corev1.EnvVar{{Name: "P", ValueFrom: podspectest.SecretKey("nope", "token", false)}},
			wantErr: `secret "nope" not found`, missing: true},
		{name: "secret key missing",
			env:     []corev1.EnvVar{{Name: "P", ValueFrom: podspectest.SecretKey("sec", "k", false)}},
			wantErr: `couldn't find key k in Secret ns/sec`, missing: true},
		{name: "optional references that do not resolve leave the variable out",
			env: []corev1.EnvVar{{Name: "A", ValueFrom: podspectest.ConfigMapKey("nope", "k", true)}, {Name: "B", ValueFrom: podspectest.ConfigMapKey("cfg", "k", true)},
				{Name: "C", ValueFrom: podspectest.SecretKey("nope", "k", true)}, {Name: "D", ValueFrom: podspectest.SecretKey("sec", "k", true)}, {Name: "E", Value: "$(A)"}},
			want: "E=$(A)"},
		{name: "no API server: a reference fails",
			noSrc: true, env: []corev1.EnvVar{{Name: "P", ValueFrom: podspectest.SecretKey("sec", "token", false)}},
			wantErr: "couldn't get secret ns/sec: no API server to read it from"},
		{name: "no API server: envFrom configmap fails",
			noSrc: true, envFrom: []corev1.EnvFromSource{cmFrom("cfg", "", false)},
			wantErr: "couldn't get configMap ns/cfg: no API server to read it from"},
		{name: "no API server: optional references are left out",
			noSrc: true, env: []corev1.EnvVar{{Name: "P", ValueFrom: podspectest.SecretKey("sec", "token", true)}, {Name: "A", Value: "a"}},
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
			src := podspectest.NewEnvSource()
			src.PutConfigMap("ns", "cfg", map[string]string{"HOST": "h", "PORT": "80"})
			src.PutConfigMap("ns", "cfg2", map[string]string{"HOST": "h2", "EXTRA": "e"})
			src.PutConfigMap("ns", "odd", map[string]string{"good": "g", "1starts-with.digit": "ok", "bad=key": "x"})
			src.PutSecret("ns", "sec", map[string]string{"token": "t0k", "user": "u", "ref": "$(A)"})
			src.PutSecret("other", "sec", map[string]string{"token": "other-namespace"})
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
	src := podspectest.NewEnvSource()
	src.PutConfigMap("ns", "cfg", map[string]string{"A": "a", "B": "b"})
	pod := envTestPod()
	ctr := &pod.Spec.Containers[0]
	ctr.EnvFrom = []corev1.EnvFromSource{cmFrom("cfg", "", false), cmFrom("cfg", "X_", false)}
	ctr.Env = []corev1.EnvVar{{Name: "A2", ValueFrom: podspectest.ConfigMapKey("cfg", "A", false)}, {Name: "B2", ValueFrom: podspectest.ConfigMapKey("cfg", "B", false)},
		{Name: "M1", ValueFrom: podspectest.ConfigMapKey("missing", "A", true)}, {Name: "M2", ValueFrom: podspectest.ConfigMapKey("missing", "B", true)}}
	ipCalls := 0
	in := EnvInputs{Source: src, PodIPs: func(context.Context) ([]string, error) { ipCalls++; return []string{"10.0.0.1"}, nil }}
	if _, err := ContainerEnv(context.Background(), pod, ctr, in); err != nil {
		t.Fatal(err)
	}
	if src.Gets() != 2 || ipCalls != 0 {
		t.Errorf("%d gets (want 2: cfg, missing) and %d IP lookups (want 0)", src.Gets(), ipCalls)
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
		{"configmap unreachable", boom, nil, []corev1.EnvVar{{Name: "A", ValueFrom: podspectest.ConfigMapKey("cfg", "A", true)}},
			"couldn't get configMap ns/cfg: connection refused", boom},
		{"secret forbidden", forbidden, nil, []corev1.EnvVar{{Name: "A", ValueFrom: podspectest.SecretKey("sec", "A", true)}},
			"couldn't get secret ns/sec: " + forbidden.Error(), forbidden},
		{"pod IPs unknown", nil, boom, []corev1.EnvVar{{Name: "IP", ValueFrom: fieldRef("status.podIP")}},
			"pod IPs: connection refused", boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := podspectest.NewEnvSource()
			src.FailWith(c.srcErr)
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
	src := podspectest.NewEnvSource()
	pod := envTestPod()
	ctr := &pod.Spec.Containers[0]
	ctr.Env = []corev1.EnvVar{{Name: "A", ValueFrom: podspectest.ConfigMapKey("cfg", "A", false)}}
	_, err := ContainerEnv(context.Background(), pod, ctr, EnvInputs{Source: src})
	if !apierrors.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false: the source's error is not kept", err)
	}
}

func TestLiteralEnv(t *testing.T) {
	c := &corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "a"}, {Name: "S", ValueFrom: podspectest.SecretKey("s", "k", false)},
		{Name: "B", Value: "$(A)$(S)"}}}
	if got, want := envString(LiteralEnv(c).Vars), "A=a B=a$(S)"; got != want {
		t.Errorf("LiteralEnv = %s, want %s", got, want)
	}
}

func TestContainerConfigExpandsCommandAndArgs(t *testing.T) {
	pod := envTestPod()
	c := &corev1.Container{Name: "app", Command: []string{"/bin/$(BIN)", "$(MISSING)"}, Args: []string{"--port=$(PORT)", "$$(PORT)"}}
	env := Env{Vars: []EnvVar{{"BIN", "server"}, {"PORT", "8080"}, {"SECRET", "s3"}}}
	cfg := ContainerConfig(pod, c, 1, env, Options{})
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
