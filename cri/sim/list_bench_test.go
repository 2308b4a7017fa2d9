package sim

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri/serve"
)

// Labels actorlet puts on its sandboxes and containers (see package cri).
const (
	benchLabelManaged       = "io.actorlet.managed"
	benchLabelContainerName = "io.kubernetes.container.name"
)

// benchNode is a runtime holding pods pods, each a READY sandbox with one
// running container "app", labelled as actorlet labels them.
type benchNode struct {
	rt         *Runtime
	uids       []string
	sandboxIDs []string
}

func newBenchNode(b *testing.B, pods int) *benchNode {
	b.Helper()
	ctx := context.Background()
	rt, err := New(Options{Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	if _, err := rt.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
		b.Fatal(err)
	}
	n := &benchNode{rt: rt}
	for i := range pods {
		uid := fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		cfg := podConfig(fmt.Sprintf("pod-%d", i), uid, 0)
		cfg.Labels[benchLabelManaged] = "true"
		sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		cc := containerConfig("app", "busybox")
		cc.Labels[LabelPodUID] = uid
		cc.Labels[benchLabelManaged] = "true"
		c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc, SandboxConfig: cfg})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
			b.Fatal(err)
		}
		n.uids = append(n.uids, uid)
		n.sandboxIDs = append(n.sandboxIDs, sb.PodSandboxId)
	}
	return n
}

// BenchmarkListByPodUID measures the List calls actorlet makes per pod,
// on nodes of 1,000 and 10,000 pods: the cost per call should not depend
// on the number of pods.
func BenchmarkListByPodUID(b *testing.B) {
	ctx := context.Background()
	for _, pods := range []int{1_000, 10_000} {
		n := newBenchNode(b, pods)
		b.Run(fmt.Sprintf("pods=%d/ListPodSandbox", pods), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % pods
				resp, err := n.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
					LabelSelector: map[string]string{LabelPodUID: n.uids[i], benchLabelManaged: "true"},
				}})
				if err != nil || len(resp.Items) != 1 {
					b.Fatalf("ListPodSandbox of pod %s: %d items, %v", n.uids[i], len(resp.GetItems()), err)
				}
			}
		})
		b.Run(fmt.Sprintf("pods=%d/ListContainers", pods), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % pods
				resp, err := n.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
					LabelSelector: map[string]string{LabelPodUID: n.uids[i], benchLabelManaged: "true"},
				}})
				if err != nil || len(resp.Containers) != 1 {
					b.Fatalf("ListContainers of pod %s: %d items, %v", n.uids[i], len(resp.GetContainers()), err)
				}
			}
		})
		b.Run(fmt.Sprintf("pods=%d/ListContainersInSandbox", pods), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i = (i + 7919) % pods
				resp, err := n.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
					PodSandboxId: n.sandboxIDs[i],
					LabelSelector: map[string]string{
						LabelPodUID: n.uids[i], benchLabelContainerName: "app", benchLabelManaged: "true",
					},
				}})
				if err != nil || len(resp.Containers) != 1 {
					b.Fatalf("ListContainers of pod %s: %d items, %v", n.uids[i], len(resp.GetContainers()), err)
				}
			}
		})
	}
}

// BenchmarkDirectListContainers lists a fleet node's 100 running
// containers over a Direct connection, as log rotation and the CRI
// watcher's relists do: with the replies handed over (Direct, what the
// fleet uses) and copied (serve.Direct without OwnReplies).
func BenchmarkDirectListContainers(b *testing.B) {
	n := newBenchNode(b, 100)
	for _, tc := range []struct {
		name string
		own  bool
	}{{"handed-over", true}, {"copied", false}} {
		b.Run(tc.name, func(b *testing.B) {
			conn, stop := serve.Direct(n.rt, serve.DirectOptions{OwnReplies: tc.own})
			defer stop()
			rc := runtimeapi.NewRuntimeServiceClient(conn)
			ctx := context.Background()
			req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
				State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
				LabelSelector: map[string]string{benchLabelManaged: "true"},
			}}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rc.ListContainers(ctx, req)
				if err != nil || len(resp.Containers) != 100 {
					b.Fatalf("ListContainers: %d containers, %v", len(resp.GetContainers()), err)
				}
			}
		})
	}
}
