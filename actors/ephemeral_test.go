package actors

import (
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// An ephemeral container added to a running pod by a spec update is
// created in the pod's sandbox, in its target's PID namespace, and started;
// the app container keeps running, not restarted, and the ephemeral
// container's status is reported. Once it exits it is not started again.
func TestEphemeralContainerAddedToRunningPod(t *testing.T) {
	simRT, client := newSim(t)
	rt := &createCapture{Runtime: client}
	j := &memJournal{streams: map[string][]*pb.Envelope{}}
	st := &statusLog{last: map[string]PodUpdate{}}
	system, sup := startSupervisor(t, Deps{Journal: j, Runtime: rt, Lister: CRILister{Client: client}, Status: st,
		Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent}}}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})
	waitUntil(t, "pod Running", func() bool {
		u, _ := st.get("uid-p")
		return running(u)
	})
	u, _ := st.get("uid-p")
	appID := u.Status.ContainerStatuses[0].ContainerID

	withDebugger := pod.DeepCopy()
	withDebugger.Spec.EphemeralContainers = []corev1.EphemeralContainer{{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "img:1",
			ImagePullPolicy: corev1.PullIfNotPresent, Stdin: true, TTY: true},
		TargetContainerName: "app",
	}}
	system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{withDebugger}})
	waitUntil(t, "ephemeral container running", func() bool {
		u, _ := st.get("uid-p")
		es := u.Status.EphemeralContainerStatuses
		return len(es) == 1 && es[0].State.Running != nil
	})
	u, _ = st.get("uid-p")
	if app := u.Status.ContainerStatuses[0]; app.ContainerID != appID || app.RestartCount != 0 || app.State.Running == nil {
		t.Errorf("app container after the update: %+v, want still %s running", app, appID)
	}
	if es := u.Status.EphemeralContainerStatuses[0]; es.Name != "dbg" || es.Image != "img:1" || es.ContainerID == "" || es.Ready {
		t.Errorf("ephemeral status %+v", es)
	}
	created := rt.created()
	if len(created) != 2 {
		t.Fatalf("created %d containers, want app and dbg", len(created))
	}
	ns := created[1].GetLinux().GetSecurityContext().GetNamespaceOptions()
	rawApp := rawContainerID(appID)
	if created[1].GetMetadata().GetName() != "dbg" || ns.GetPid() != runtimeapi.NamespaceMode_TARGET || ns.GetTargetId() != rawApp {
		t.Errorf("dbg created with namespaces %v, want pid TARGET %s", ns, rawApp)
	}

	// It exits: it stays exited, nothing is created again.
	dbgID := u.Status.EphemeralContainerStatuses[0].ContainerID
	rawDbg := rawContainerID(dbgID)
	if err := client.StopContainer(t.Context(), rawDbg, 0); err != nil {
		t.Fatal(err)
	}
	obs, err := CRILister{Client: client}.ListPodObserved(t.Context(), "uid-p") // as the runtime's watcher reports it
	if err != nil {
		t.Fatal(err)
	}
	system.Root.Send(sup, obs)
	waitUntil(t, "ephemeral container terminated", func() bool {
		u, _ := st.get("uid-p")
		es := u.Status.EphemeralContainerStatuses
		return len(es) == 1 && es[0].State.Terminated != nil
	})
	u, _ = st.get("uid-p")
	if n := len(rt.created()); n != 2 {
		t.Errorf("%d containers created after the ephemeral one exited, want still 2", n)
	}
	if app := u.Status.ContainerStatuses[0]; app.ContainerID != appID || app.State.Running == nil {
		t.Errorf("app container: %+v", app)
	}
	if v := simRT.Info().Violations; len(v) > 0 {
		t.Fatalf("CRI misuse: %v", v)
	}
}

// rawContainerID strips a status's "<runtime>://", if any.
func rawContainerID(id string) string {
	if _, raw, ok := strings.Cut(id, "://"); ok {
		return raw
	}
	return id
}
