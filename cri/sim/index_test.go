package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"pgregory.net/rapid"
)

// Label values the index test draws from: few, so that filters match.
var (
	testPodUIDs     = []string{"u0", "u1", "u2", ""} // "" is a value too
	testAppLabels   = []string{"a", "b"}
	testContainerNs = []string{"one", "two"}
)

const testLabelManaged = "io.actorlet.managed"

// indexModel drives a Runtime through random histories, remembering IDs so
// that filters can name live and removed objects.
type indexModel struct {
	rt                      *Runtime
	ctx                     context.Context
	n                       int                              // names created so far
	sandboxIDs, ctrIDs      []string                         // live
	goneSandboxes, goneCtrs []string                         // removed
	metas                   []*runtimeapi.PodSandboxMetadata // of every sandbox run
}

// drawLabels returns labels with each key of pools present or not, its
// value drawn from the key's pool.
func drawLabels(t *rapid.T, what string, pools map[string][]string) map[string]string {
	labels := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(pools)) {
		if rapid.Bool().Draw(t, what+" has "+k) {
			labels[k] = rapid.SampledFrom(pools[k]).Draw(t, what+" "+k)
		}
	}
	return labels
}

func (m *indexModel) runSandbox(t *rapid.T) {
	m.n++
	labels := drawLabels(t, "sandbox", map[string][]string{
		LabelPodUID: testPodUIDs, "app": testAppLabels, testLabelManaged: {"true"},
	})
	uid := labels[LabelPodUID] // as the kubelet's, mostly
	if rapid.Bool().Draw(t, "metadata uid of its own") {
		uid = rapid.SampledFrom(testPodUIDs).Draw(t, "metadata uid")
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: fmt.Sprintf("p%d", m.n), Namespace: "default", Uid: uid},
		Labels:   labels,
	}
	resp, err := m.rt.RunPodSandbox(m.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	m.sandboxIDs = append(m.sandboxIDs, resp.PodSandboxId)
	m.metas = append(m.metas, cfg.Metadata)
}

// rerunSandbox runs a sandbox with the metadata of one run before, with
// other labels: refused (AlreadyExists) while that one exists.
func (m *indexModel) rerunSandbox(t *rapid.T) {
	if len(m.metas) == 0 {
		t.Skip("no sandbox run yet")
	}
	meta := rapid.SampledFrom(m.metas).Draw(t, "metadata")
	labels := drawLabels(t, "sandbox", map[string][]string{LabelPodUID: testPodUIDs})
	m.rt.mu.Lock()
	var owner string
	for id, sb := range m.rt.sandboxes {
		if sb.meta == newSandboxMeta(meta) {
			owner = id
		}
	}
	m.rt.mu.Unlock()
	resp, err := m.rt.RunPodSandbox(m.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: meta, Labels: labels}})
	switch {
	case owner != "" && !errors.Is(err, ErrAlreadyExists):
		t.Fatalf("RunPodSandbox with the metadata of live sandbox %s: %v, want AlreadyExists", owner, err)
	case owner == "" && err != nil:
		t.Fatalf("RunPodSandbox with the metadata of a removed sandbox: %v", err)
	case err == nil:
		m.sandboxIDs = append(m.sandboxIDs, resp.PodSandboxId)
	}
}

func (m *indexModel) createContainer(t *rapid.T) {
	if len(m.sandboxIDs) == 0 {
		t.Skip("no sandbox")
	}
	sb := rapid.SampledFrom(m.sandboxIDs).Draw(t, "sandbox")
	m.n++
	labels := drawLabels(t, "container", map[string][]string{
		LabelPodUID: testPodUIDs, "io.kubernetes.container.name": testContainerNs, testLabelManaged: {"true"},
	})
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: fmt.Sprintf("c%d", m.n)},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Labels:   labels,
	}
	resp, err := m.rt.CreateContainer(m.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: cfg})
	if errors.Is(err, ErrFailedPrecondition) {
		return // a NOTREADY sandbox
	}
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	m.ctrIDs = append(m.ctrIDs, resp.ContainerId)
}

func (m *indexModel) startContainer(t *rapid.T) {
	if len(m.ctrIDs) == 0 {
		t.Skip("no container")
	}
	id := rapid.SampledFrom(m.ctrIDs).Draw(t, "container")
	_, _ = m.rt.StartContainer(m.ctx, &runtimeapi.StartContainerRequest{ContainerId: id}) // refused unless CREATED
}

func (m *indexModel) stopSandbox(t *rapid.T) {
	if len(m.sandboxIDs) == 0 {
		t.Skip("no sandbox")
	}
	id := rapid.SampledFrom(m.sandboxIDs).Draw(t, "sandbox")
	if _, err := m.rt.StopPodSandbox(m.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		t.Fatalf("StopPodSandbox: %v", err)
	}
}

func (m *indexModel) removeSandbox(t *rapid.T) {
	if len(m.sandboxIDs) == 0 {
		t.Skip("no sandbox")
	}
	i := rapid.IntRange(0, len(m.sandboxIDs)-1).Draw(t, "sandbox")
	id := m.sandboxIDs[i]
	if _, err := m.rt.RemovePodSandbox(m.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
		t.Fatalf("RemovePodSandbox: %v", err)
	}
	m.sandboxIDs = slices.Delete(m.sandboxIDs, i, i+1)
	m.goneSandboxes = append(m.goneSandboxes, id)
	m.ctrIDs = slices.DeleteFunc(m.ctrIDs, func(c string) bool {
		if m.exists(c) {
			return false
		}
		m.goneCtrs = append(m.goneCtrs, c)
		return true
	})
}

func (m *indexModel) removeContainer(t *rapid.T) {
	if len(m.ctrIDs) == 0 {
		t.Skip("no container")
	}
	i := rapid.IntRange(0, len(m.ctrIDs)-1).Draw(t, "container")
	id := m.ctrIDs[i]
	if _, err := m.rt.RemoveContainer(m.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	m.ctrIDs = slices.Delete(m.ctrIDs, i, i+1)
	m.goneCtrs = append(m.goneCtrs, id)
}

func (m *indexModel) exists(containerID string) bool {
	m.rt.mu.Lock()
	defer m.rt.mu.Unlock()
	_, ok := m.rt.containers[containerID]
	return ok
}

// drawID is "" (no filter) half of the time, else a live, removed or
// unknown ID.
func drawID(t *rapid.T, what string, live, gone []string) string {
	pool := append(append([]string{"nope"}, live...), gone...)
	return rapid.OneOf(rapid.Just(""), rapid.SampledFrom(pool)).Draw(t, what)
}

// drawSelector draws a label selector, pinning the pod UID label often
// (also to values no object has).
func drawSelector(t *rapid.T, what string, other string, otherPool []string) map[string]string {
	return drawLabels(t, what, map[string][]string{
		LabelPodUID: append([]string{"zz"}, testPodUIDs...), other: append([]string{"zz"}, otherPool...), testLabelManaged: {"true", "false"},
	})
}

// listSandboxes compares ListPodSandbox and ListPodSandboxStats with a
// scan of all sandboxes.
func (m *indexModel) listSandboxes(t *rapid.T) {
	f := &runtimeapi.PodSandboxFilter{
		Id:            drawID(t, "sandbox id", m.sandboxIDs, m.goneSandboxes),
		LabelSelector: drawSelector(t, "sandbox selector", "app", testAppLabels),
	}
	if rapid.Bool().Draw(t, "by state") {
		f.State = &runtimeapi.PodSandboxStateValue{State: rapid.SampledFrom([]runtimeapi.PodSandboxState{
			runtimeapi.PodSandboxState_SANDBOX_READY, runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
		}).Draw(t, "state")}
	}
	resp, err := m.rt.ListPodSandbox(m.ctx, &runtimeapi.ListPodSandboxRequest{Filter: f})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	var got []string
	for _, it := range resp.Items {
		got = append(got, it.Id)
	}
	if want := m.scanSandboxes(func(sb *sandbox) bool { return sb.matches(f) }); !slices.Equal(got, want) {
		t.Fatalf("ListPodSandbox(%v) = %v, a scan gives %v", f, got, want)
	}

	sf := &runtimeapi.PodSandboxStatsFilter{Id: f.Id, LabelSelector: f.LabelSelector}
	stats, err := m.rt.ListPodSandboxStats(m.ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: sf})
	if err != nil {
		t.Fatalf("ListPodSandboxStats: %v", err)
	}
	got = nil
	for _, s := range stats.Stats {
		got = append(got, s.Attributes.Id)
	}
	want := m.scanSandboxes(func(sb *sandbox) bool {
		return sb.ready && (sf.Id == "" || sf.Id == sb.id) && sb.labels.matches(sf.LabelSelector)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("ListPodSandboxStats(%v) = %v, a scan gives %v", sf, got, want)
	}
}

// listContainers compares ListContainers and ListContainerStats with a
// scan of all containers.
func (m *indexModel) listContainers(t *rapid.T) {
	f := &runtimeapi.ContainerFilter{
		Id:            drawID(t, "container id", m.ctrIDs, m.goneCtrs),
		PodSandboxId:  drawID(t, "sandbox id", m.sandboxIDs, m.goneSandboxes),
		LabelSelector: drawSelector(t, "container selector", "io.kubernetes.container.name", testContainerNs),
	}
	if rapid.Bool().Draw(t, "by state") {
		f.State = &runtimeapi.ContainerStateValue{State: rapid.SampledFrom([]runtimeapi.ContainerState{
			runtimeapi.ContainerState_CONTAINER_CREATED, runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED,
		}).Draw(t, "state")}
	}
	resp, err := m.rt.ListContainers(m.ctx, &runtimeapi.ListContainersRequest{Filter: f})
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	var got []string
	for _, it := range resp.Containers {
		got = append(got, it.Id)
	}
	if want := m.scanContainers(func(c *container) bool { return c.matches(f) }); !slices.Equal(got, want) {
		t.Fatalf("ListContainers(%v) = %v, a scan gives %v", f, got, want)
	}

	sf := &runtimeapi.ContainerStatsFilter{Id: f.Id, PodSandboxId: f.PodSandboxId, LabelSelector: f.LabelSelector}
	stats, err := m.rt.ListContainerStats(m.ctx, &runtimeapi.ListContainerStatsRequest{Filter: sf})
	if err != nil {
		t.Fatalf("ListContainerStats: %v", err)
	}
	got = nil
	for _, s := range stats.Stats {
		got = append(got, s.Attributes.Id)
	}
	want := m.scanContainers(func(c *container) bool {
		return c.state == runtimeapi.ContainerState_CONTAINER_RUNNING && (sf.Id == "" || sf.Id == c.id) &&
			(sf.PodSandboxId == "" || sf.PodSandboxId == c.sb.id) && c.labels.matches(sf.LabelSelector)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("ListContainerStats(%v) = %v, a scan gives %v", sf, got, want)
	}
}

// scanSandboxes is the listing without an index: every sandbox, oldest
// first.
func (m *indexModel) scanSandboxes(keep func(*sandbox) bool) []string {
	m.rt.mu.Lock()
	defer m.rt.mu.Unlock()
	var out []*sandbox
	for _, sb := range m.rt.sandboxes {
		if keep(sb) {
			out = append(out, sb)
		}
	}
	slices.SortFunc(out, compareSandboxes)
	var ids []string
	for _, sb := range out {
		ids = append(ids, sb.id)
	}
	return ids
}

// scanContainers is the listing without an index: every container,
// oldest first.
func (m *indexModel) scanContainers(keep func(*container) bool) []string {
	m.rt.mu.Lock()
	defer m.rt.mu.Unlock()
	var out []*container
	for _, c := range m.rt.containers {
		if keep(c) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, compareContainers)
	var ids []string
	for _, c := range out {
		ids = append(ids, c.id)
	}
	return ids
}

// checkIndex checks that the indexes hold exactly the live objects that
// carry the label, under its value, oldest first.
// counts checks that Counts is what listings without filters count.
func (m *indexModel) counts(t *rapid.T) {
	sbs, err := m.rt.ListPodSandbox(m.ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatalf("ListPodSandbox: %v", err)
	}
	cs, err := m.rt.ListContainers(m.ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	if gotS, gotC := m.rt.Counts(); gotS != len(sbs.Items) || gotC != len(cs.Containers) {
		t.Fatalf("Counts() = %d sandboxes, %d containers; listed %d and %d", gotS, gotC, len(sbs.Items), len(cs.Containers))
	}
}

func (m *indexModel) checkIndex(t *rapid.T) {
	m.rt.mu.Lock()
	defer m.rt.mu.Unlock()
	checkLabelIndex(t, "sandbox", m.rt.sandboxesByPod, m.rt.sandboxes, func(sb *sandbox) (map[string]string, uint64) { return sb.labels.toMap(), sb.order })
	checkLabelIndex(t, "container", m.rt.containersByPod, m.rt.containers, func(c *container) (map[string]string, uint64) { return c.labels.toMap(), c.order })
	checkSandboxesByUID(t, m.rt)
}

// checkSandboxesByUID checks that sandboxesByUID holds exactly the live
// sandboxes that sandboxesByPod does not find under their metadata uid,
// and that the names and READY counts found through both are a scan's.
func checkSandboxesByUID(t *rapid.T, rt *Runtime) {
	want := map[string]int{}
	ready := map[string]int{}
	for _, sb := range rt.sandboxes {
		if v, ok := sb.labels.get(LabelPodUID); !ok || v != sb.meta.uid {
			want[sb.meta.uid]++
		}
		if sb.ready {
			ready[sb.podUID()]++
		}
		if owner := rt.sandboxNamedLocked(sb.meta); owner != sb {
			t.Fatalf("the name of sandbox %s is held by %v", sb.id, owner)
		}
	}
	for uid, objs := range rt.sandboxesByUID {
		if len(objs) == 0 || len(objs) != want[uid] {
			t.Fatalf("sandboxesByUID has %d sandboxes for %q, want %d", len(objs), uid, want[uid])
		}
		delete(want, uid)
	}
	if len(want) > 0 {
		t.Fatalf("sandboxesByUID misses uids %v", want)
	}
	for _, uid := range testPodUIDs {
		if got := rt.readyOfPodLocked(uid); got != ready[uid] {
			t.Fatalf("pod UID %q: %d READY sandboxes found, %d by a scan", uid, got, ready[uid])
		}
	}
}

// entries are ix's values and objects, in one map.
func (ix labelIndex[T]) entries() map[string][]T {
	m := maps.Clone(ix.many)
	for v, o := range ix.one {
		if _, dup := m[v]; dup {
			panic(fmt.Sprintf("value %q both in one and many", v))
		}
		m[v] = []T{o}
	}
	return m
}

func checkLabelIndex[T comparable](t *rapid.T, what string, ix labelIndex[T], live map[string]T, attrs func(T) (map[string]string, uint64)) {
	want := map[string]int{}
	for _, o := range live {
		labels, _ := attrs(o)
		if v, ok := labels[ix.key]; ok {
			want[v]++
		}
	}
	for v, objs := range ix.entries() {
		if len(objs) == 0 {
			t.Fatalf("%s index keeps an empty entry for %q", what, v)
		}
		if len(objs) != want[v] {
			t.Fatalf("%s index has %d objects for %q, %d live objects carry it", what, len(objs), v, want[v])
		}
		var last uint64
		for _, o := range objs {
			labels, order := attrs(o)
			if labels[ix.key] != v || order <= last {
				t.Fatalf("%s index entry %q: object with %s=%q, order %d after %d", what, v, ix.key, labels[ix.key], order, last)
			}
			last = order
		}
		delete(want, v)
	}
	if len(want) > 0 {
		t.Fatalf("%s index misses values %v", what, want)
	}
}

// TestListIndexAgreesWithScan drives a runtime through random histories
// of creations, stops and removals, and checks after each step that
// List calls with random filters (often pinning io.kubernetes.pod.uid,
// with or without an ID or sandbox ID) return exactly what a scan of
// all objects returns, in the same order, and that the index holds
// exactly the live objects.
func TestListIndexAgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rt, err := New(Options{Logger: zap.NewNop()})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		defer rt.Close()
		m := &indexModel{rt: rt, ctx: context.Background()}
		if _, err := rt.PullImage(m.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
			t.Fatalf("PullImage: %v", err)
		}
		t.Repeat(map[string]func(*rapid.T){
			"runSandbox":      m.runSandbox,
			"rerunSandbox":    m.rerunSandbox,
			"createContainer": m.createContainer,
			"startContainer":  m.startContainer,
			"stopSandbox":     m.stopSandbox,
			"removeSandbox":   m.removeSandbox,
			"removeContainer": m.removeContainer,
			"listSandboxes":   m.listSandboxes,
			"listContainers":  m.listContainers,
			"counts":          m.counts,
			"":                m.checkIndex,
		})
	})
}

// A sandbox's containers are listed by its ID in creation order; once its
// last container is removed, or if it never had one, listing by its ID
// finds none.
func TestListContainersOfASandboxInOrder(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	pull(t, ctx, rt, "busybox")
	aCfg, bCfg := podConfig("a", "uid-a", 0), podConfig("b", "uid-b", 0)
	a, b := runPod(t, ctx, rt, aCfg), runPod(t, ctx, rt, bCfg)
	var ids []string
	for _, name := range []string{"c1", "c2", "c3"} {
		ids = append(ids, createContainer(t, ctx, rt, a, aCfg, containerConfig(name, "busybox")))
	}
	other := createContainer(t, ctx, rt, b, bCfg, containerConfig("c1", "busybox"))
	list := func(sb string) []string {
		t.Helper()
		resp, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sb}})
		noErr(t, err, "ListContainers")
		var out []string
		for _, c := range resp.GetContainers() {
			out = append(out, c.GetId())
		}
		return out
	}
	if got := list(a); !slices.Equal(got, ids) {
		t.Fatalf("sandbox a lists %v, want %v (creation order)", got, ids)
	}
	_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ids[1]})
	noErr(t, err, "RemoveContainer")
	if got, want := list(a), []string{ids[0], ids[2]}; !slices.Equal(got, want) {
		t.Fatalf("after removing the middle one, sandbox a lists %v, want %v", got, want)
	}
	for _, id := range []string{ids[0], ids[2]} {
		_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
		noErr(t, err, "RemoveContainer")
	}
	if got := list(a); len(got) != 0 {
		t.Fatalf("sandbox a without containers lists %v, want none", got)
	}
	if got := list(b); !slices.Equal(got, []string{other}) {
		t.Fatalf("sandbox b lists %v, want %v", got, []string{other})
	}
	if got := list(runPod(t, ctx, rt, podConfig("empty", "uid-e", 0))); len(got) != 0 {
		t.Fatalf("a sandbox that never had a container lists %v, want none", got)
	}
}
