package podevents_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/podevents"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

func env(ev *pb.Event) *pb.Envelope { return &pb.Envelope{Event: ev} }

func TestRecorderUsesTheKubeletsReasons(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := podevents.New(fake)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	r.Acting(pod, lifecycle.PullImage{Container: "app", Image: "example.com/app:1"})
	r.Recorded(pod, []*pb.Envelope{
		env(&pb.Event{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{}}}),
		env(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "app", Image: "example.com/app:1", ImageRef: "sha256:aa",
			PullNanos: int64(1500 * time.Millisecond), ImageSize: 4096}}}),
		env(&pb.Event{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "side", Image: "example.com/side:1", ImageRef: "sha256:bb"}}}),
		env(&pb.Event{Kind: &pb.Event_ImagePullFailed{ImagePullFailed: &pb.ImagePullFailed{Container: "app", Image: "example.com/nope:1",
			Reason: "ErrImagePull", Message: "rpc error: code = NotFound desc = not found"}}}),
		env(&pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{Name: "app", Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "example.com/nope:1"`}}}),
		env(&pb.Event{Kind: &pb.Event_ContainerFailed{ContainerFailed: &pb.ContainerFailed{Name: "app", Reason: "CreateContainerError",
			Message: "context deadline exceeded"}}}),
		env(&pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app"}}}),
		env(&pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app"}}}),
		// Adopted after a restart: the run that did it recorded it.
		env(&pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app", Recovered: true}}}),
		env(&pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{Name: "app", Reason: "CrashLoopBackOff"}}}),
		// A retry without back-off (reason ""): no event.
		env(&pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{Name: "app"}}}),
		env(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{Message: "no network"}}}),
		env(&pb.Event{Kind: &pb.Event_PodRejected{PodRejected: &pb.PodRejected{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu"}}}),
		env(&pb.Event{Kind: &pb.Event_ActiveDeadlineExceeded{ActiveDeadlineExceeded: &pb.ActiveDeadlineExceeded{}}}),
		env(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", Kind: pb.ProbeKind_PROBE_READINESS, Success: true}}}),
		// A thresholded probe result: its runs had their events (Probed).
		env(&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", Kind: pb.ProbeKind_PROBE_LIVENESS, Message: "HTTP probe failed with statuscode: 500"}}}),
		env(&pb.Event{Kind: &pb.Event_HookFailed{HookFailed: &pb.HookFailed{Name: "app", Hook: "PostStart", Message: "exit code 1"}}}),
		env(&pb.Event{Kind: &pb.Event_HookFailed{HookFailed: &pb.HookFailed{Name: "app", Hook: "PreStop", Message: "timed out"}}}),
		env(&pb.Event{Kind: &pb.Event_PodEvicted{PodEvicted: &pb.PodEvicted{Reason: "Evicted", Message: "The node was low on resource: memory."}}}),
		env(&pb.Event{Kind: &pb.Event_SandboxFailed{SandboxFailed: &pb.SandboxFailed{Reason: "FailedMount", Message: `MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found`}}}),
	})
	// A stop is acted on with no event: Killing comes from its journaled
	// intent, once.
	r.Acting(pod, lifecycle.StopContainer{Name: "app", ID: "c1"})
	r.Recorded(pod, []*pb.Envelope{env(&pb.Event{Kind: &pb.Event_ContainerStopRequested{ContainerStopRequested: &pb.ContainerStopRequested{Name: "app", ContainerId: "c1"}}})})
	r.Recorded(nil, []*pb.Envelope{env(&pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "orphan"}}})})
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	want := []string{
		`Normal Pulling Pulling image "example.com/app:1"`,
		`Normal Pulled Successfully pulled image "example.com/app:1" in 1.5s (1.5s including waiting). Image size: 4096 bytes.`,
		`Normal Pulled Container image "example.com/side:1" already present on machine and can be accessed by the pod`,
		`Warning Failed Failed to pull image "example.com/nope:1": rpc error: code = NotFound desc = not found`,
		"Warning Failed Error: ErrImagePull",
		`Normal BackOff Back-off pulling image "example.com/nope:1"`,
		"Warning Failed Error: ImagePullBackOff",
		"Warning Failed Error: context deadline exceeded",
		"Normal Created Container created",
		"Normal Started Container started",
		"Warning BackOff Back-off restarting failed container app in pod web_default(uid-1)",
		"Warning FailedCreatePodSandBox Failed to create pod sandbox: no network",
		"Warning OutOfcpu Node didn't have enough resource: cpu",
		"Normal DeadlineExceeded Pod was active on the node longer than the specified deadline",
		"Warning FailedPostStartHook PostStartHook failed",
		"Warning FailedPreStopHook PreStopHook failed",
		"Warning Evicted The node was low on resource: memory.",
		`Warning FailedMount MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found`,
		"Normal Killing Stopping container app",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
}

func TestRetryingShowsTheRuntimesMessage(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	r := podevents.New(fake)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	err := errors.New(`rpc error: code = Unknown desc = open /etc/resolv.conf: no such file or directory`)
	r.Retrying(pod, lifecycle.RunSandbox{Attempt: 1}, err)
	r.Retrying(pod, lifecycle.CreateContainer{Name: "app", Attempt: 1}, errors.New("context deadline exceeded"))
	r.Retrying(pod, lifecycle.StopSandbox{}, err) // no kubelet event
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	want := []string{
		"Warning FailedCreatePodSandBox Failed to create pod sandbox: " + err.Error(),
		"Warning Failed Error: context deadline exceeded",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
}

// TestProbedRecordsEveryFailedRun: as the kubelet's prober, an Unhealthy
// event for each failed or errored probe run (client-go's correlator
// aggregates the repeats), a ProbeWarning for a warning, nothing for a
// success.
func TestProbedRecordsEveryFailedRun(t *testing.T) {
	fake := record.NewFakeRecorder(10)
	r := podevents.New(fake)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	failed := actors.Probed{Container: "app", ContainerID: "c1", Kind: pb.ProbeKind_PROBE_READINESS, Outcome: actors.ProbeFailed,
		Message: "HTTP probe failed with statuscode: 503"}
	for range 3 {
		r.Probed(pod, failed)
	}
	r.Probed(pod, actors.Probed{Container: "app", Kind: pb.ProbeKind_PROBE_READINESS, Outcome: actors.ProbeSucceeded})
	r.Probed(pod, actors.Probed{Container: "app", Kind: pb.ProbeKind_PROBE_LIVENESS, Outcome: actors.ProbeErrored, Message: "container not found"})
	r.Probed(pod, actors.Probed{Container: "app", Kind: pb.ProbeKind_PROBE_STARTUP, Outcome: actors.ProbeWarned,
		Message: "Probe terminated redirects, Response body: moved"})
	r.Probed(nil, failed)
	close(fake.Events)
	var got []string
	for e := range fake.Events {
		got = append(got, e)
	}
	unhealthy := "Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 503"
	want := []string{unhealthy, unhealthy, unhealthy,
		"Warning Unhealthy Liveness probe errored and resulted in unknown state: container not found",
		"Warning ProbeWarning Startup probe warning: Probe terminated redirects, Response body: moved",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
}
