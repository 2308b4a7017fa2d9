package actors

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/podspec"
	"github.com/actorlet/actorlet/podspec/podspectest"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// TestSubPathExprFromContainerEnv: a volumeMount's subPathExpr is expanded
// from the container's resolved environment (a fieldRef here, as in the
// upstream "should allow substituting values in a volume subpath" spec),
// so the runtime is asked to mount the volume's subdirectory named by the
// pod; a subPathExpr that climbs out of the volume is a
// CreateContainerConfigError naming the mount, and nothing is created.
func TestSubPathExprFromContainerEnv(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		wantDir    string // the mount's host path under the volume; "" for an error
		wantMsg    string
	}{
		{name: "pod name", expr: "$(POD_NAME)/logs", wantDir: "p/logs"},
		{name: "climbing out", expr: "$(UP)/etc", wantMsg: `container "app": volumeMount "data" at /mnt: subPathExpr "$(UP)/etc": subPath "../etc" must not contain '..'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, client := newSim(t)
			rt := &createCapture{Runtime: client}
			j := &memJournal{streams: map[string][]*pb.Envelope{}}
			st := &statusLog{last: map[string]PodUpdate{}}
			vols := &dirVolumes{root: t.TempDir(), tearDowns: map[string]int{}}
			system, sup := startSupervisor(t, Deps{Journal: j, Runtime: rt, Lister: CRILister{Client: client}, Status: st,
				EnvSource: podspectest.NewEnvSource(), Volumes: vols, PodConfig: podspec.Options{PodLogsDir: t.TempDir()},
				Lifecycle: fastRetries(), Logger: zaptest.NewLogger(t)}, j)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-p"},
				Spec: corev1.PodSpec{
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{Name: "app", Image: "img:1", ImagePullPolicy: corev1.PullIfNotPresent,
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "UP", Value: ".."},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/mnt", SubPathExpr: tc.expr}}}}}}
			system.Root.Send(sup, &SourceSnapshot{Source: "test", Pods: []*corev1.Pod{pod}})

			if tc.wantMsg != "" {
				waitUntil(t, "CreateContainerConfigError", func() bool {
					u, _ := st.get("uid-p")
					reason, msg := waitingReason(u)
					return reason == "CreateContainerConfigError" && msg == tc.wantMsg
				})
				if n := len(rt.created()); n != 0 {
					t.Fatalf("%d containers created with an invalid subPathExpr", n)
				}
				return
			}
			waitUntil(t, "pod Running", func() bool {
				u, _ := st.get("uid-p")
				return running(u)
			})
			created := rt.created()
			if len(created) != 1 {
				t.Fatalf("created %d containers, want 1", len(created))
			}
			want := filepath.Join(vols.PodDir("uid-p"), "volumes", "data", tc.wantDir)
			if real, err := filepath.EvalSymlinks(want); err == nil {
				want = real
			}
			var got string
			for _, m := range created[0].GetMounts() {
				if m.GetContainerPath() == "/mnt" {
					got = m.GetHostPath()
				}
			}
			if got != want {
				t.Errorf("/mnt mounts %q, want %q", got, want)
			}
		})
	}
}
