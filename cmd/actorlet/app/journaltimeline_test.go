package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/journal"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// crashLoopJournal writes a stopped node's journal holding one pod, web,
// whose container crashed twice and waits in CrashLoopBackOff, and whose
// readiness probe failed; it returns the root dir and the spec's digest.
func crashLoopJournal(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	j, err := journal.Open(ctx, dir, journal.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const uid = "8d0c4f3e-0000-4000-8000-0000000000aa"
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: uid},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/ready"}}}}}}}}
	spec, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spec)
	digest := hex.EncodeToString(sum[:])
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	evs := []*pb.Event{
		{Kind: &pb.Event_PodAccepted{PodAccepted: &pb.PodAccepted{PodJson: spec, SpecDigest: digest, Source: "api"}}},
		{Kind: &pb.Event_SandboxRequested{SandboxRequested: &pb.SandboxRequested{Attempt: 1}}},
		{Kind: &pb.Event_SandboxCreated{SandboxCreated: &pb.SandboxCreated{Attempt: 1, SandboxId: "sb1", Ip: "10.88.0.2"}}},
		{Kind: &pb.Event_ImagePulled{ImagePulled: &pb.ImagePulled{Container: "app", Image: "example.com/app:1", ImageRef: "sha256:aa", Attempt: 1}}},
	}
	for i, id := range []string{"c1", "c2"} {
		attempt := uint32(i + 1)
		evs = append(evs,
			&pb.Event{Kind: &pb.Event_ContainerRequested{ContainerRequested: &pb.ContainerRequested{Name: "app", Attempt: attempt}}},
			&pb.Event{Kind: &pb.Event_ContainerCreated{ContainerCreated: &pb.ContainerCreated{Name: "app", Attempt: attempt, ContainerId: id}}},
			&pb.Event{Kind: &pb.Event_ContainerStarted{ContainerStarted: &pb.ContainerStarted{Name: "app", Attempt: attempt, ContainerId: id,
				StartedAtUnixNano: at(time.Duration(i) * time.Second)}}},
			&pb.Event{Kind: &pb.Event_ProbeChanged{ProbeChanged: &pb.ProbeChanged{Name: "app", ContainerId: id, Kind: pb.ProbeKind_PROBE_READINESS,
				Message: "exit 1"}}},
			&pb.Event{Kind: &pb.Event_ContainerExited{ContainerExited: &pb.ContainerExited{Name: "app", Attempt: attempt, ContainerId: id,
				ExitCode: 3, Reason: "Error", StartedAtUnixNano: at(time.Duration(i) * time.Second), FinishedAtUnixNano: at(time.Duration(i)*time.Second + 500*time.Millisecond)}}},
		)
		if i == 0 {
			evs = append(evs, &pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{Name: "app",
				UntilUnixNano: at(500 * time.Millisecond), NextBackoffNanos: int64(10 * time.Second)}}})
		}
	}
	evs = append(evs, &pb.Event{Kind: &pb.Event_BackOffStarted{BackOffStarted: &pb.BackOffStarted{Name: "app",
		UntilUnixNano: at(11500 * time.Millisecond), NextBackoffNanos: int64(20 * time.Second), Reason: "CrashLoopBackOff",
		Message: "back-off 10s restarting failed container=app pod=web_default(" + uid + ")"}}})
	envs := make([]*pb.Envelope, len(evs))
	for i, ev := range evs {
		envs[i] = &pb.Envelope{Seq: uint64(i + 1), PodUid: uid, TimeUnixNano: at(time.Duration(i) * 100 * time.Millisecond), Event: ev}
	}
	if err := j.Append(ctx, uid, envs...); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, digest
}

// `journal events <pod>` starts with the pod's summary (phase, the
// container's state with its waiting reason and message, restarts, last
// state, the spec's digest) and names each event with the kubelet's
// reasons; --show-spec prints the spec.
func TestJournalPodTimeline(t *testing.T) {
	dir, digest := crashLoopJournal(t)
	var out syncBuffer
	if err := runJournalCmd(context.Background(), &out, "events", "default/web", "--root-dir", dir); err != nil {
		t.Fatal(err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"Pod:     default/web (8d0c4f3e-0000-4000-8000-0000000000aa)",
		"Source:  api",
		"Spec:    sha256:" + digest + "  (--show-spec prints it)",
		"Phase:   Running",
		"  app: Waiting CrashLoopBackOff: back-off 10s restarting failed container=app pod=web_default(8d0c4f3e-0000-4000-8000-0000000000aa); ready=false restarts=1",
		"    last state: Terminated Error, exit code 3, finished 2026-12-05T12:00:01Z",
		"Events:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Stopped:") {
		t.Errorf("a pod in a crash loop has not stopped:\n%s", text)
	}
	lines := map[string]string{} // event -> reasons of its last line
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && strings.HasPrefix(f[1], "2026-") {
			lines[f[2]] = f[3]
			if f[2] == "PodAccepted" && !strings.Contains(line, "spec=sha256:"+digest[:12]) {
				t.Errorf("PodAccepted without its spec's digest: %s", line)
			}
		}
	}
	for ev, want := range map[string]string{"PodAccepted": "-", "SandboxRequested": "-", "ImagePulled": "Pulled", "ContainerCreated": "Created",
		"ContainerStarted": "Started", "ProbeChanged": "Unhealthy", "ContainerExited": "-", "BackOffStarted": "BackOff"} {
		if lines[ev] != want {
			t.Errorf("%s: reasons %q, want %q\n%s", ev, lines[ev], want, text)
		}
	}
	if strings.Contains(text, "image: example.com/app:1") {
		t.Errorf("the spec printed without --show-spec:\n%s", text)
	}

	out = syncBuffer{}
	if err := runJournalCmd(context.Background(), &out, "events", "default/web", "--show-spec", "--root-dir", dir); err != nil {
		t.Fatal(err, out.String())
	}
	if text := out.String(); !strings.Contains(text, "Spec (sha256:"+digest+"):") || !strings.Contains(text, "    - image: example.com/app:1") {
		t.Errorf("--show-spec lacks the spec:\n%s", text)
	}

	out = syncBuffer{}
	if err := runJournalCmd(context.Background(), &out, "events", "default/web", "--show-spec", "-o", "json", "--root-dir", dir); err != nil {
		t.Fatal(err, out.String())
	}
	var first, last eventJSON
	all := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(all[0]), &first); err != nil {
		t.Fatalf("-o json is JSON lines, without a summary: %v\n%s", err, out.String())
	}
	if err := json.Unmarshal([]byte(all[len(all)-1]), &last); err != nil {
		t.Fatal(err)
	}
	var spec corev1.Pod
	if first.Event != "PodAccepted" || first.SpecDigest != digest || json.Unmarshal(first.Spec, &spec) != nil || spec.Spec.Containers[0].Image != "example.com/app:1" {
		t.Errorf("first line %+v: want PodAccepted with its digest and spec", first)
	}
	if last.Event != "BackOffStarted" || strings.Join(last.Reasons, ",") != "BackOff" {
		t.Errorf("last line %+v: want BackOffStarted with reasons [BackOff]", last)
	}
}
