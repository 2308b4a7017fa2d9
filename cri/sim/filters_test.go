package sim

import (
	"io"
	"slices"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestListFilters checks that every filter field is honoured, ANDed, and
// that an ID filter is exact.
func TestListFilters(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	c := serveUnix(t, rt)
	pull(t, ctx, rt, "busybox")

	cfgA, cfgB, cfgC := podConfig("a", "ua", 0), podConfig("b", "ub", 0), podConfig("c", "uc", 0)
	cfgB.Labels["tier"], cfgC.Labels["tier"] = "back", "back"
	sbA, sbB, sbC := runPod(t, ctx, rt, cfgA), runPod(t, ctx, rt, cfgB), runPod(t, ctx, rt, cfgC)
	_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbC})
	noErr(t, err, "StopPodSandbox")

	a1 := createContainer(t, ctx, rt, sbA, cfgA, containerConfig("one", "busybox"))
	a2 := createContainer(t, ctx, rt, sbA, cfgA, containerConfig("two", "busybox"))
	b1 := createContainer(t, ctx, rt, sbB, cfgB, containerConfig("one", "busybox"))
	startContainer(t, ctx, rt, a1)
	startContainer(t, ctx, rt, b1)

	ready := &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
	notReady := &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   []string
	}{
		{"nil filter", nil, []string{sbA, sbB, sbC}},
		{"empty filter", &runtimeapi.PodSandboxFilter{}, []string{sbA, sbB, sbC}},
		{"id", &runtimeapi.PodSandboxFilter{Id: sbB}, []string{sbB}},
		{"id prefix is not a match", &runtimeapi.PodSandboxFilter{Id: sbB[:12]}, nil},
		{"unknown id", &runtimeapi.PodSandboxFilter{Id: "nope"}, nil},
		{"ready", &runtimeapi.PodSandboxFilter{State: ready}, []string{sbA, sbB}},
		{"not ready", &runtimeapi.PodSandboxFilter{State: notReady}, []string{sbC}},
		{"label", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "back"}}, []string{sbB, sbC}},
		{"two labels", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "back", LabelPodUID: "uc"}}, []string{sbC}},
		{"label value mismatch", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "front"}}, nil},
		{"label and state", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "back"}, State: ready}, []string{sbB}},
		{"id and wrong state", &runtimeapi.PodSandboxFilter{Id: sbA, State: notReady}, nil},
		{"id and wrong label", &runtimeapi.PodSandboxFilter{Id: sbA, LabelSelector: map[string]string{"tier": "back"}}, nil},
	} {
		resp, err := c.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: tc.filter})
		noErr(t, err, "ListPodSandbox "+tc.name)
		var got []string
		for _, it := range resp.Items {
			got = append(got, it.Id)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListPodSandbox %s = %v, want %v", tc.name, got, tc.want)
		}
	}

	running := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	created := &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_CREATED}
	one := map[string]string{"io.kubernetes.container.name": "one"}
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"nil filter", nil, []string{a1, a2, b1}},
		{"id", &runtimeapi.ContainerFilter{Id: a2}, []string{a2}},
		{"unknown id", &runtimeapi.ContainerFilter{Id: "nope"}, nil},
		{"sandbox", &runtimeapi.ContainerFilter{PodSandboxId: sbA}, []string{a1, a2}},
		{"unknown sandbox", &runtimeapi.ContainerFilter{PodSandboxId: "nope"}, nil},
		{"running", &runtimeapi.ContainerFilter{State: running}, []string{a1, b1}},
		{"created", &runtimeapi.ContainerFilter{State: created}, []string{a2}},
		{"label", &runtimeapi.ContainerFilter{LabelSelector: one}, []string{a1, b1}},
		{"sandbox and label", &runtimeapi.ContainerFilter{PodSandboxId: sbB, LabelSelector: one}, []string{b1}},
		{"sandbox and state", &runtimeapi.ContainerFilter{PodSandboxId: sbA, State: created}, []string{a2}},
		{"id in other sandbox", &runtimeapi.ContainerFilter{Id: a1, PodSandboxId: sbB}, nil},
		{"id and wrong state", &runtimeapi.ContainerFilter{Id: a1, State: created}, nil},
	} {
		resp, err := c.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: tc.filter})
		noErr(t, err, "ListContainers "+tc.name)
		var got []string
		for _, it := range resp.Containers {
			got = append(got, it.Id)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListContainers %s = %v, want %v", tc.name, got, tc.want)
		}
	}

	// The streaming variants return the same items.
	stream, err := c.StreamContainers(ctx, &runtimeapi.StreamContainersRequest{Filter: &runtimeapi.ContainerFilter{State: running}})
	noErr(t, err, "StreamContainers")
	var got []string
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			break
		}
		noErr(t, err, "StreamContainers Recv")
		if len(resp.Containers) == 0 {
			t.Errorf("StreamContainers sent an empty list")
		}
		for _, it := range resp.Containers {
			got = append(got, it.Id)
		}
	}
	if !slices.Equal(got, []string{a1, b1}) {
		t.Errorf("StreamContainers = %v", got)
	}

	// Stats are listed for running containers only.
	stats, err := c.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{PodSandboxId: sbA}})
	noErr(t, err, "ListContainerStats")
	if len(stats.Stats) != 1 || stats.Stats[0].Attributes.Id != a1 || stats.Stats[0].Memory.WorkingSetBytes.Value == 0 {
		t.Errorf("ListContainerStats = %v", stats.Stats)
	}
	stats, err = c.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{Id: a1, PodSandboxId: sbB}})
	noErr(t, err, "ListContainerStats of a container in another sandbox")
	if len(stats.Stats) != 0 {
		t.Errorf("ListContainerStats(id %s, sandbox %s) = %v, want none: the container is in %s", a1, sbB, stats.Stats, sbA)
	}
	pstats, err := c.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	noErr(t, err, "ListPodSandboxStats")
	if len(pstats.Stats) != 2 {
		t.Errorf("ListPodSandboxStats returned %d sandboxes, want the 2 ready ones", len(pstats.Stats))
	}
}
