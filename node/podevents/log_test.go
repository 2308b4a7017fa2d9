package podevents_test

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/podevents"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func TestLogNamesThePodAndTheRuntimesMessage(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := podevents.NewLog(zap.New(core))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	l.Acting(pod, lifecycle.PullImage{Container: "app", Image: "example.com/app:1"})
	l.Recorded(pod, []*pb.Envelope{
		env(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "app", Image: "example.com/app:1", PullNanos: int64(18 * time.Second)}}}),
		env(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{Message: "open /var/log/pods/x: permission denied"}}}),
		env(&pb.Event{Kind: &pb.Event_HookFailed{HookFailed: &pb.HookFailed{Name: "app", Hook: "PostStart", Message: "exit code 1: no such file"}}}),
	})
	got := logs.AllUntimed()
	if len(got) != 4 {
		t.Fatalf("%d lines: %v", len(got), got)
	}
	want := []struct {
		level zapcore.Level
		msg   string
	}{
		{zapcore.InfoLevel, "Pulling image example.com/app:1"},
		{zapcore.InfoLevel, `Successfully pulled image "example.com/app:1" in 18s (18s including waiting). Image size: 0 bytes.`},
		{zapcore.WarnLevel, "Failed to create pod sandbox: open /var/log/pods/x: permission denied"},
		{zapcore.WarnLevel, "PostStartHook failed"},
	}
	for i, w := range want {
		e := got[i]
		if e.Level != w.level || e.Message != w.msg {
			t.Errorf("line %d: %v %q, want %v %q", i, e.Level, e.Message, w.level, w.msg)
		}
		if f := e.ContextMap(); f["pod"] != "default/web" || f["podUID"] != "uid-1" {
			t.Errorf("line %d fields %v", i, f)
		}
	}
	if f := got[3].ContextMap(); f["output"] != "exit code 1: no such file" || f["container"] != "app" {
		t.Errorf("hook line fields %v", f)
	}
}

// TestLogProbes: each probe run at debug level; a thresholded failure at
// warn level, saying what follows.
func TestLogProbes(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := podevents.NewLog(zap.New(core))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	l.Probed(pod, actors.Probed{Container: "app", Kind: pb.ProbeKind_PROBE_READINESS, Outcome: actors.ProbeFailed, Message: "503"})
	l.Probed(pod, actors.Probed{Container: "app", Kind: pb.ProbeKind_PROBE_READINESS, Outcome: actors.ProbeSucceeded})
	l.Recorded(pod, []*pb.Envelope{
		env(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", Kind: pb.ProbeKind_PROBE_READINESS, Message: "503"}}}),
		env(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", Kind: pb.ProbeKind_PROBE_LIVENESS, Message: "dead"}}}),
		env(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", Kind: pb.ProbeKind_PROBE_READINESS, Success: true}}}),
	})
	var got []string
	for _, e := range logs.AllUntimed() {
		got = append(got, e.Level.String()+" "+e.Message+" "+e.ContextMap()["container"].(string))
	}
	want := []string{
		"debug Readiness probe failed: 503 app",
		"warn Readiness probe failed: 503; the container is not ready app",
		"warn Liveness probe failed: dead; the container will be restarted app",
		"info Readiness probe succeeded app",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLogBelowItsLevel: with logging off, events are neither translated
// nor given fields; under warn level, a warning still gets through.
func TestLogBelowItsLevel(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	pulled := []*pb.Envelope{env(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "app", Image: "example.com/app:1"}}})}
	off := podevents.NewLog(zap.NewNop())
	if n := testing.AllocsPerRun(50, func() {
		off.Acting(pod, lifecycle.PullImage{Container: "app", Image: "example.com/app:1"})
		off.Recorded(pod, pulled)
		off.Probed(pod, actors.Probed{})
	}); n != 0 {
		t.Errorf("%v allocations with logging off, want 0", n)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	l := podevents.NewLog(zap.New(core))
	l.Acting(pod, lifecycle.PullImage{Container: "app", Image: "example.com/app:1"})
	l.Recorded(pod, append(pulled, env(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{Message: "no"}}})))
	if got := logs.AllUntimed(); len(got) != 1 || got[0].Level != zapcore.WarnLevel || got[0].ContextMap()["pod"] != "default/web" {
		t.Errorf("lines %v, want the warning alone, with the pod", got)
	}
}
