package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/test/internal/upstream"
)

// compareMember is one node agent of TestClusterCompareKubelet: its pods
// live in their own namespace, bound to its node.
type compareMember struct {
	label, node, namespace string
}

// compareCase is one pod of the comparison and the event that says it has
// reached its steady state (a crash loop in back-off, a failing probe...).
type compareCase struct {
	name   string
	steady string // "Type Reason" of the event that marks the steady state
	pod    func(name, node string) *corev1.Pod
}

// waitingLog collects, through a watch, every container waiting reason
// each pod reported, and whether its container ever ran.
type waitingLog struct {
	mu      sync.Mutex
	seen    map[string]map[string]bool // namespace/name -> waiting reasons
	ran     map[string]bool
	current map[string]string // the latest waiting reason ("" if not waiting)
}

func (w *waitingLog) observe(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[key] == nil {
		w.seen[key] = map[string]bool{}
	}
	w.current[key] = ""
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Waiting != nil {
			w.seen[key][s.State.Waiting.Reason] = true
			w.current[key] = s.State.Waiting.Reason
		}
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			w.ran[key] = true
		}
	}
}

// reasons are the waiting reasons key reported, sorted. ContainerCreating
// is the transient state before the first start, which a node's status
// writer may or may not publish before the next one: it counts only while
// it is the current one (a sandbox that never comes up).
func (w *waitingLog) reasons(key string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for r := range w.seen[key] {
		if r != "ContainerCreating" || w.current[key] == r {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// TestClusterCompareKubelet runs the same pods on actorlet (node-1) and on
// the upstream kubelet v1.37.2 (node-2), each on its own simulated runtime
// (`actorlet sim-runtime`), in two namespaces of the cluster of
// test/e2e/cluster.sh: a good pod, a missing image, a crash loop, a
// failing readiness probe and a pod whose sandbox cannot be created (the
// runtime fails its RunPodSandbox, asked by the pod's annotation
// sim.AnnotationRunPodSandboxError, on both). Once every pod reached its
// steady state on both nodes, the event reasons per pod (Events API,
// source kubelet, "Type Reason") and the container waiting reasons each
// pod reported must be the same; messages legitimately differ (durations,
// IDs) and are not compared. A difference fails with a table of both.
//
// It needs root (the kubelet runs as nobody in its own user and mount
// namespaces, see test/internal/upstream) and the kubelet binary
// (`test/e2e/cluster.sh install kubelet`); without them it skips, unless
// ACTORLET_E2E_REQUIRE_CLUSTER is set.
func TestClusterCompareKubelet(t *testing.T) {
	c := needCluster(t)
	kubelet, err := upstream.KubeletBinary()
	if err == nil && os.Geteuid() != 0 {
		err = fmt.Errorf("needs root: the kubelet runs as nobody in its own user and mount namespaces")
	}
	if err != nil {
		if os.Getenv("ACTORLET_E2E_REQUIRE_CLUSTER") != "" {
			t.Fatalf("ACTORLET_E2E_REQUIRE_CLUSTER is set: %v", err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	members := []compareMember{
		{label: "actorlet", node: "node-1", namespace: "cmp-actorlet"},
		{label: "kubelet v1.37.2", node: "node-2", namespace: "cmp-kubelet"},
	}
	t.Cleanup(func() {
		for _, m := range members {
			deleteNodePods(t, c.admin, m.node)
			_ = c.admin.CoreV1().Nodes().Delete(ctx, m.node, metav1.DeleteOptions{})
			_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, m.node, metav1.DeleteOptions{})
		}
	})
	for _, m := range members {
		deleteNodePods(t, c.admin, m.node)
		_, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.namespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	// The kubelet (nobody) must reach its files: not below t.TempDir's 0700.
	dir, err := os.MkdirTemp("", "actorlet-compare-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept %s (the kubelet's and the runtimes' logs)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	s := startSim(t, t.TempDir())
	d := newNodeDirs(t)
	d.name = members[0].node
	startNode(t, s.endpoint, d, "--kubeconfig", c.nodeKubeconfig(d.name), "--node-status-update-frequency", "1s")
	// Its runtime runs as nobody too: from a copy of the binary it can reach.
	simBinary := filepath.Join(dir, "actorlet")
	if data, err := os.ReadFile(binary); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(simBinary, data, 0o755); err != nil {
		t.Fatal(err)
	}
	simK := upstream.StartSim(t, simBinary, filepath.Join(dir, "kubelet-sim"))
	upstream.StartKubelet(t, kubelet, filepath.Join(dir, "kubelet"), simK, members[1].node, c.nodeKubeconfig(members[1].node))
	for _, m := range members {
		upstream.WaitNodeReady(t, c.admin, m.node, 2*time.Minute)
	}

	cases := []compareCase{
		{name: "good", steady: "Normal Started", pod: func(name, node string) *corev1.Pod {
			return comparePod(name, node, corev1.Container{Name: "app", Image: "example.com/cmp-good:1"})
		}},
		{name: "missing-image", steady: "Normal BackOff", pod: func(name, node string) *corev1.Pod {
			return comparePod(name, node, corev1.Container{Name: "app", Image: "example.com/notfound-cmp:1"})
		}},
		{name: "crash-loop", steady: "Warning BackOff", pod: func(name, node string) *corev1.Pod {
			return comparePod(name, node, corev1.Container{Name: "app", Image: "example.com/cmp-crash:1",
				Env: []corev1.EnvVar{{Name: sim.EnvExitAfter, Value: "50ms"}, {Name: sim.EnvExitCode, Value: "3"}}})
		}},
		{name: "readiness-failing", steady: "Warning Unhealthy", pod: func(name, node string) *corev1.Pod {
			return comparePod(name, node, corev1.Container{Name: "app", Image: "example.com/cmp-probe:1",
				Env: []corev1.EnvVar{{Name: sim.EnvExecExitCode, Value: "1"}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/ready"}}},
					PeriodSeconds: 1, FailureThreshold: 1,
				}})
		}},
		{name: "no-sandbox", steady: "Warning FailedCreatePodSandBox", pod: func(name, node string) *corev1.Pod {
			p := comparePod(name, node, corev1.Container{Name: "app", Image: "example.com/cmp-nosandbox:1"})
			p.Annotations = map[string]string{sim.AnnotationRunPodSandboxError: "failed to set up pod network: simulated CNI failure"}
			return p
		}},
	}

	// Every waiting reason the pods report, from their creation on.
	w := &waitingLog{seen: map[string]map[string]bool{}, ran: map[string]bool{}, current: map[string]string{}}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	for _, m := range members {
		f := informers.NewSharedInformerFactoryWithOptions(c.admin, 0, informers.WithNamespace(m.namespace))
		inf := f.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: w.observe, UpdateFunc: func(_, obj any) { w.observe(obj) },
		}); err != nil {
			t.Fatal(err)
		}
		f.Start(stop)
		if !cache.WaitForCacheSync(stop, inf.HasSynced) {
			t.Fatal("pod informer did not sync")
		}
	}

	uids := map[string]string{} // namespace/name -> UID
	for _, m := range members {
		for _, cc := range cases {
			p := cc.pod(cc.name, m.node)
			var created *corev1.Pod
			// The namespace's default ServiceAccount may not be there yet.
			waitFor(t, "creating "+m.namespace+"/"+cc.name, func() (bool, string) {
				created, err = c.admin.CoreV1().Pods(m.namespace).Create(ctx, p, metav1.CreateOptions{})
				return err == nil, fmt.Sprint(err)
			})
			uids[m.namespace+"/"+cc.name] = string(created.UID)
		}
	}
	events := func(m compareMember, name string) []corev1.Event {
		list, err := c.admin.CoreV1().Events(m.namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", uids[m.namespace+"/"+name]).String()})
		if err != nil {
			return nil
		}
		var out []corev1.Event
		for _, e := range list.Items {
			if e.Source.Component == "kubelet" {
				out = append(out, e)
			}
		}
		return out
	}
	reasons := func(m compareMember, name string) []string {
		var out []string
		for _, e := range events(m, name) {
			out = append(out, e.Type+" "+e.Reason)
		}
		sort.Strings(out)
		return slices.Compact(out)
	}

	// Steady states, on both nodes. A pod that does not reach it on one
	// node is a difference the table below shows: not fatal here.
	steadyWithin(t, 3*time.Minute, "every pod's steady state on both nodes", func() (bool, string) {
		var missing []string
		for _, m := range members {
			for _, cc := range cases {
				if !slices.Contains(reasons(m, cc.name), cc.steady) {
					missing = append(missing, fmt.Sprintf("%s %s: no %q event yet (have %v)", m.label, cc.name, cc.steady, reasons(m, cc.name)))
				}
			}
		}
		return len(missing) == 0, strings.Join(missing, "; ")
	})

	// The comparison. Events are written asynchronously (and aggregated),
	// so the two sides may take a moment to agree; a minute at most.
	table := func() (string, bool) {
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "pod\twhat\t%s\t%s\tsame\n", members[0].label, members[1].label)
		same := true
		for _, cc := range cases {
			rows := []struct {
				what string
				a, k []string
			}{
				{"events", reasons(members[0], cc.name), reasons(members[1], cc.name)},
				{"waiting", w.reasons(members[0].namespace + "/" + cc.name), w.reasons(members[1].namespace + "/" + cc.name)},
			}
			for _, r := range rows {
				eq := slices.Equal(r.a, r.k)
				same = same && eq
				mark := "yes"
				if !eq {
					mark = "NO"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cc.name, r.what, orNone(r.a), orNone(r.k), mark)
			}
		}
		tw.Flush()
		return b.String(), same
	}
	waitWithin(t, time.Minute, "the same event and waiting reasons on both nodes", func() (bool, string) {
		tab, same := table()
		return same, "\n" + tab + "\n" + eventDetails(members, cases, events)
	})
	tab, _ := table()
	t.Logf("event and waiting reasons per pod:\n%s", tab)
	t.Logf("events:\n%s", eventDetails(members, cases, events))
}

// comparePod is a pod of the comparison: bound to node, no service account
// token (no volume to differ on), the node's DNS (neither node has a
// cluster DNS; for ClusterFirst the kubelet warns MissingClusterDNS, which
// actorlet does not emit: see the README's table), a short grace period.
func comparePod(name, node string, ctr corev1.Container) *corev1.Pod {
	grace := int64(2)
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"e2e": "compare-kubelet"}},
		Spec: corev1.PodSpec{
			NodeName: node, Containers: []corev1.Container{ctr}, DNSPolicy: corev1.DNSDefault,
			TerminationGracePeriodSeconds: &grace, AutomountServiceAccountToken: &no,
		},
	}
}

// eventDetails lists every pod's events with their messages and counts,
// node by node, for a failure's log.
func eventDetails(members []compareMember, cases []compareCase, events func(compareMember, string) []corev1.Event) string {
	var b strings.Builder
	for _, m := range members {
		for _, cc := range cases {
			fmt.Fprintf(&b, "%s %s:\n", m.label, cc.name)
			for _, e := range events(m, cc.name) {
				fmt.Fprintf(&b, "  %s %s (x%d): %s\n", e.Type, e.Reason, max(e.Count, 1), e.Message)
			}
		}
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// steadyWithin polls cond every 100ms until it holds or within passed;
// then it logs what was still missing and returns.
func steadyWithin(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("not reached in %v: %s; still missing: %s", within, what, why)
			return
		}
		time.Sleep(100 * time.Millisecond) // polling the API server, with a deadline
	}
}
