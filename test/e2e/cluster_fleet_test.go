package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// fleetReport is what `actorlet fleet --status-address` serves at /nodes.
type fleetReport struct {
	Nodes []struct {
		Name                                 string
		Bound, Active, Sandboxes, Containers int
		Error                                string
	}
	Sandboxes, Containers, Active int
}

// TestClusterFleet runs `actorlet fleet --nodes 50` against the control
// plane: a kubeconfig that may not impersonate nodes is refused; 50 nodes
// in one process register as system:node:<name>, each
// Ready with its Lease renewed; 1,000 pods bound by kube-scheduler to them
// all run; deleted, they are gone from the API and from the nodes'
// runtimes; the fleet stops on SIGTERM and the Nodes are deleted. The
// durations and the process's CPU and memory are logged, not asserted.
func TestClusterFleet(t *testing.T) {
	c := needControllers(t)
	const (
		nodes     = 50
		pods      = 1000
		namespace = "fleet-e2e"
		label     = "actorlet.test/fleet"
	)
	ctx := context.Background()
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("fleet-%02d", i)
	}
	deleteNodes := func() {
		for _, n := range names {
			_ = c.admin.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
			_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
	existing := func() int {
		n := 0
		for _, name := range names {
			if _, err := c.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil {
				n++
			}
		}
		return n
	}
	t.Cleanup(func() {
		_ = c.admin.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
		deleteNodes()
	})
	// Nodes of an earlier fleet would keep their labels: a node registers
	// its labels only when it creates its Node, as the kubelet.
	deleteNodes()
	waitFor(t, "no fleet Nodes left from before", func() (bool, string) {
		left := existing()
		return left == 0, fmt.Sprintf("%d left", left)
	})
	if _, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	// An identity that may not impersonate nodes is refused at start.
	if _, stderr, code := runCLI(t, "fleet", "--kubeconfig", c.nodeKubeconfig("node-1"), "--nodes", "1", "--journal", "memory"); code == 0 ||
		!strings.Contains(stderr, "cannot impersonate") {
		t.Fatalf("a fleet as system:node:node-1 exited %d: %s", code, tail(stderr, 5))
	}

	// The journals on tmpfs; ACTORLET_E2E_FLEET_JOURNAL=disk puts them in
	// the test's temp dir, fsynced, to compare.
	journal := []string{"--journal", "memory"}
	if os.Getenv("ACTORLET_E2E_FLEET_JOURNAL") == "disk" {
		journal = []string{"--journal", "disk", "--root-dir", t.TempDir()}
	}
	status := "127.0.0.1:" + freePort(t)
	start := time.Now()
	fleet := startProc(t, "actorlet fleet", append(append([]string{"fleet", "--kubeconfig", os.Getenv("ACTORLET_ADMIN_KUBECONFIG"),
		"--nodes", strconv.Itoa(nodes)}, journal...), "--status-address", status,
		"--node-labels", label+"=e2e", "--max-pods", "110", "--cpu", "8", "--memory", "32Gi",
		"--node-lease-duration-seconds", "20")...)
	fleet.waitLog("the fleet is running")
	started := time.Since(start)
	nodesList := func() []corev1.Node {
		l, err := c.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: label + "=e2e"})
		if err != nil {
			return nil
		}
		return l.Items
	}
	waitEvery(t, 3*time.Minute, time.Second/4, "50 fleet nodes Ready", func() (bool, string) {
		ready := 0
		for _, n := range nodesList() {
			if st, _ := nodeReady(&n); st == corev1.ConditionTrue {
				ready++
			}
		}
		return ready == nodes, fmt.Sprintf("%d Ready", ready)
	})
	ready := time.Since(start)
	for _, n := range nodesList() {
		if n.Status.Capacity.Cpu().String() != "8" || n.Status.Capacity.Memory().String() != "32Gi" || n.Status.Capacity.Pods().Value() != 110 {
			t.Fatalf("%s's capacity %v, want cpu 8, memory 32Gi, pods 110", n.Name, n.Status.Capacity)
		}
	}
	first := map[string]time.Time{}
	for _, n := range names {
		l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != n {
			t.Fatalf("%s's lease: %v %v", n, leaseSpec(l), err)
		}
		first[n] = l.Spec.RenewTime.Time
	}

	// 1,000 pods, bound by kube-scheduler to the fleet's nodes only.
	podsStart := time.Now()
	create := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, pods)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range create {
				if _, err := c.admin.CoreV1().Pods(namespace).Create(ctx, fleetPod(i, label), metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range pods {
		create <- i
	}
	close(create)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	created := time.Since(podsStart)
	waitEvery(t, 5*time.Minute, time.Second/4, "1,000 pods Running on the fleet", func() (bool, string) {
		l, err := c.admin.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		phases := map[corev1.PodPhase]int{}
		for _, p := range l.Items {
			phases[p.Status.Phase]++
		}
		return phases[corev1.PodRunning] == pods, fmt.Sprint(phases)
	})
	running := time.Since(podsStart)
	r := fleetNodes(t, status)
	if r.Active != pods || r.Sandboxes != pods || r.Containers != pods {
		t.Fatalf("the fleet runs %d pods, %d sandboxes, %d containers; want %d each", r.Active, r.Sandboxes, r.Containers, pods)
	}
	for _, n := range r.Nodes {
		if n.Bound != n.Active || n.Error != "" {
			t.Fatalf("%s: %d pods bound, %d run (%s)", n.Name, n.Bound, n.Active, n.Error)
		}
	}
	waitEvery(t, 2*time.Minute, time.Second/4, "every fleet node's lease renewed", func() (bool, string) {
		stale := []string{}
		for _, n := range names {
			l, err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n, metav1.GetOptions{})
			if err != nil || l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(first[n]) {
				stale = append(stale, n)
			}
		}
		return len(stale) == 0, fmt.Sprintf("not renewed yet: %v", stale)
	})
	busy := processMetrics(t, status)
	// One connection pool for all: the 50 nodes' requests share HTTP/2
	// connections (a second one opens only past a connection's stream
	// limit), not one TLS connection per node.
	if conns := apiConnections(t, fleet.cmd.Process.Pid); conns < 1 || conns > 3 {
		t.Fatalf("the fleet holds %d connections to the API server, want 1 (to 3)", conns)
	} else {
		busy += fmt.Sprintf(", connections to the API server %d", conns)
	}

	// Deleted: gone from the API and from every runtime.
	delStart := time.Now()
	if err := c.admin.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEvery(t, 5*time.Minute, time.Second/4, "the pods gone from the API and the fleet", func() (bool, string) {
		l, err := c.admin.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(l.Items) > 0 {
			return false, fmt.Sprintf("%d in the API", len(l.Items))
		}
		// The fleet's runtimes are listed only once the API has no pod
		// left: each look lists all 50.
		r := fleetNodes(t, status)
		return r.Active == 0 && r.Sandboxes == 0 && r.Containers == 0,
			fmt.Sprintf("%d in the API; the fleet runs %d, its runtimes hold %d sandboxes, %d containers", len(l.Items), r.Active, r.Sandboxes, r.Containers)
	})
	deleted := time.Since(delStart)
	t.Logf("%d nodes (%s): running %s, all Ready %s after start; %d pods created in %s, all Running %s after the first creation; deleted and gone in %s",
		nodes, strings.Join(journal[:2], " "), started.Round(time.Millisecond), ready.Round(time.Millisecond), pods, created.Round(time.Millisecond),
		running.Round(time.Millisecond), deleted.Round(time.Millisecond))
	t.Logf("the fleet process with the pods running: %s; after their deletion: %s", busy, processMetrics(t, status))

	fleet.stop()
	if code := fleet.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the fleet exited with %d on SIGTERM:\n%s", code, tail(fleet.output(), 20))
	}
	if !strings.Contains(fleet.output(), `"the fleet stopped"`) {
		t.Fatalf("the fleet did not log its stop:\n%s", tail(fleet.output(), 20))
	}
	deleteNodes()
	waitFor(t, "the fleet's Nodes deleted", func() (bool, string) {
		left := existing()
		return left == 0, fmt.Sprintf("%d left", left)
	})
}

// fleetPod is the i-th pod of the fleet test, for the nodes labelled
// label=e2e.
func fleetPod(i int, label string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%04d", i), Labels: map[string]string{"app": "fleet"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{label: "e2e"},
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{{Name: "app", Image: "example.com/app:1"}},
		},
	}
}

func leaseSpec(l *coordinationv1.Lease) string {
	if l == nil {
		return "none"
	}
	return fmt.Sprintf("%+v", l.Spec)
}

// fleetNodes reads the fleet's /nodes.
func fleetNodes(t *testing.T, addr string) fleetReport {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/nodes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r fleetReport
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decode /nodes: %v", err)
	}
	return r
}

// processMetrics is the fleet process's CPU time and resident memory from
// its /metrics, for the log.
func processMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, m := range []string{"process_cpu_seconds_total ", "process_resident_memory_bytes ", "go_goroutines "} {
			if strings.HasPrefix(line, m) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, ", ")
}

// apiConnections counts the established TCP connections of process pid to
// the API server of the admin kubeconfig (its sockets in /proc/<pid>/fd
// matched with /proc/<pid>/net/tcp and tcp6).
func apiConnections(t *testing.T, pid int) int {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("ACTORLET_ADMIN_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("the API server's port in %q: %v", cfg.Host, err)
	}
	sockets := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			sockets[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local, remote (hex ip:port), state (01: established), ..., inode
			if len(f) < 10 || f[3] != "01" || !sockets[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[2], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				n++
			}
		}
	}
	return n
}
