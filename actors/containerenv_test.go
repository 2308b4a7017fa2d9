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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/journal"
	"github.com/actorlet/actorlet/podspec"
	"github.com/actorlet/actorlet/podspec/podspectest"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

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
		appear  func(*podspectest.EnvSource)
	}{
		{"configmap", corev1.EnvVar{Name: "LEVEL", ValueFrom: podspectest.ConfigMapKey("cfg", "level", false)}, `configmap "cfg" not found`,
			func(s *podspectest.EnvSource) { s.PutConfigMap("default", "cfg", map[string]string{"level": "debug"}) }},
		{"secret key", corev1.EnvVar{Name: "LEVEL", ValueFrom: podspectest.SecretKey("sec", "level", false)}, `couldn't find key level in Secret default/sec`,
			func(s *podspectest.EnvSource) {
				s.PutSecret("default", "sec", map[string]string{"other": "x", "level": "debug"})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, client := newSim(t)
			rt := &createCapture{Runtime: client}
			src := podspectest.NewEnvSource()
			src.PutSecret("default", "sec", map[string]string{"other": "x"})
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
			before := src.Gets()
			waitUntil(t, "a retry", func() bool { return src.Gets() >= before+2 })
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
	src := podspectest.NewEnvSource()
	src.PutSecret("default", "db", map[string]string{"password": password})
	src.PutSecret("default", "api", map[string]string{"KEY": apiKey})
	st := &statusLog{last: map[string]PodUpdate{}}
	system := actor.NewActorSystem()
	sup, err := system.Root.SpawnNamed(NewSupervisorProps(t.Context(), Deps{Journal: j, Runtime: rt, Lister: CRILister{Client: client}, Status: st,
		EnvSource: src, Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, load, &Recovery{}), "supervisor")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: secretPod},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/app", "--password=$(DB_PASSWORD)"},
			EnvFrom: []corev1.EnvFromSource{podspectest.SecretFrom("api", "API_", false)},
			Env: []corev1.EnvVar{
				{Name: "LITERAL", Value: literal},
				{Name: "DB_PASSWORD", ValueFrom: podspectest.SecretKey("db", "password", false)},
				// Missing at first: the first attempts fail with the other
				// secrets already read.
				{Name: "TOKEN", ValueFrom: podspectest.SecretKey("db", "token", false)},
			}}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "CreateContainerConfigError", func() bool {
		u, _ := st.get(secretPod)
		reason, _ := waitingReason(u)
		return reason == "CreateContainerConfigError"
	})
	src.PutSecret("default", "db", map[string]string{"password": password, "token": keyLater})
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
	missing := &podspec.MissingRefError{Kind: "configmap", Namespace: "ns", Name: "cfg"}
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
