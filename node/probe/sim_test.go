package probe

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/sim"
)

// simExec adapts the simulated runtime's ExecSync to Exec.
type simExec struct{ rt *sim.Runtime }

func (s simExec) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	return s.rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout / time.Second)})
}

// TestAgainstSim probes a container of the simulated runtime, whose pod
// IPs are loopback addresses (127.89.0.0/16, apart from cri/sim's tests).
func TestAgainstSim(t *testing.T) {
	ctx := context.Background()
	rt, err := sim.New(sim.Options{PodCIDR: "127.89.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close() }()
	if _, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		t.Fatal(err)
	}
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Uid: "u1", Namespace: "default"}}
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, SandboxConfig: sbCfg,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
			Image:    &runtimeapi.ImageSpec{Image: "busybox"},
			Envs: []*runtimeapi.KeyValue{
				{Key: sim.EnvHTTPPort, Value: []byte("8080")}, {Key: sim.EnvTCPPort, Value: []byte("9000")}, {Key: sim.EnvExecExitCode, Value: []byte("1")},
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
		t.Fatal(err)
	}
	st, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if err != nil {
		t.Fatal(err)
	}
	tg := target(st.GetStatus().GetNetwork().GetIp(), corev1.ContainerPort{Name: "http", ContainerPort: 8080})
	tg.ContainerID = cc.ContainerId
	r := &Runner{Exec: simExec{rt}}
	named := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9000)}}
	for _, tc := range []struct {
		name string
		h    corev1.ProbeHandler
		want Result
	}{{"http", named, Success}, {"tcp", tcp, Success}, {"exec", execHandler("true"), Failure}} {
		if res, msg := r.Probe(ctx, tg, tc.h, time.Second); res != tc.want {
			t.Errorf("%s probe: %v %q, want %v", tc.name, res, msg, tc.want)
		}
	}
	if err := rt.SetHTTPStatus(cc.ContainerId, 500); err != nil {
		t.Fatal(err)
	}
	if res, msg := r.Probe(ctx, tg, named, time.Second); res != Failure || msg != "HTTP probe failed with statuscode: 500" {
		t.Errorf("http probe after SetHTTPStatus(500): %v %q", res, msg)
	}
}
