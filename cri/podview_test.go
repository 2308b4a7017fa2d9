package cri

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const (
	stCreated = runtimeapi.ContainerState_CONTAINER_CREATED
	stRunning = runtimeapi.ContainerState_CONTAINER_RUNNING
	stExited  = runtimeapi.ContainerState_CONTAINER_EXITED
)

// populate fills f with two managed pods and one pod of another tenant.
func populate(f *fakeRuntime) (ids map[string]string) {
	ids = map[string]string{}
	ids["a-sb0"] = f.addSandbox("pod-a", 0, false, "", true)
	ids["a-sb1"] = f.addSandbox("pod-a", 1, true, "10.1.0.7", true)
	ids["a-init"] = f.addContainer(ids["a-sb1"], "init", 0, stRunning)
	f.exit(ids["a-init"], 0, "Completed")
	ids["a-app"] = f.addContainer(ids["a-sb1"], "app", 0, stRunning)
	f.exit(ids["a-app"], 137, "OOMKilled")
	ids["a-app1"] = f.addContainer(ids["a-sb1"], "app", 1, stRunning)
	ids["a-side"] = f.addContainer(ids["a-sb1"], "side", 0, stCreated)
	ids["b-sb0"] = f.addSandbox("pod-b", 0, true, "10.1.0.8", true)
	ids["b-app"] = f.addContainer(ids["b-sb0"], "app", 0, stRunning)
	// Another tenant: same label keys, no LabelManaged.
	ids["x-sb0"] = f.addSandbox("pod-x", 0, true, "10.1.0.9", false)
	ids["x-app"] = f.addContainer(ids["x-sb0"], "app", 0, stRunning)
	return ids
}

func TestListPodsGroupsManagedObjects(t *testing.T) {
	for _, sloppy := range []bool{false, true} {
		name := "runtime applies selectors"
		if sloppy {
			name = "runtime ignores selectors"
		}
		t.Run(name, func(t *testing.T) {
			f := newFakeRuntime()
			f.ignoreSelectors = sloppy
			ids := populate(f)
			c := dialFake(t, f, Options{})

			pods, err := c.ListPods(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var uids []string
			for uid := range pods {
				uids = append(uids, uid)
			}
			slices.Sort(uids)
			if !slices.Equal(uids, []string{"pod-a", "pod-b"}) {
				t.Fatalf("pods = %v, want [pod-a pod-b] (pod-x is not managed)", uids)
			}

			a := pods["pod-a"]
			if a.UID != "pod-a" || a.Name != "name-pod-a" || a.Namespace != "ns" {
				t.Errorf("pod-a identity = %q %q %q", a.UID, a.Name, a.Namespace)
			}
			if len(a.Sandboxes) != 2 {
				t.Fatalf("pod-a sandboxes = %+v", a.Sandboxes)
			}
			sb0, sb1 := a.Sandboxes[0], a.Sandboxes[1]
			if sb0.ID != ids["a-sb0"] || sb0.Ready || sb0.IP != "" || sb0.Attempt != 0 ||
				sb1.ID != ids["a-sb1"] || !sb1.Ready || sb1.IP != "10.1.0.7" || sb1.Attempt != 1 ||
				!sb0.CreatedAt.Before(sb1.CreatedAt) || a.UID != "pod-a" {
				t.Errorf("pod-a sandboxes = %+v", a.Sandboxes)
			}

			var got []string
			for _, ct := range a.Containers {
				got = append(got, ct.ID)
			}
			if want := []string{ids["a-init"], ids["a-app"], ids["a-app1"], ids["a-side"]}; !slices.Equal(got, want) {
				t.Fatalf("pod-a containers = %v, want %v (sorted by creation)", got, want)
			}
			first, app, app1, side := a.Containers[0], a.Containers[1], a.Containers[2], a.Containers[3]
			if first.State != ContainerExited || first.ExitCode != 0 || first.Reason != "Completed" {
				t.Errorf("init = %+v", first)
			}
			// The exit code and times exist only in ContainerStatus, not in the listing.
			if app.Name != "app" || app.Attempt != 0 || app.State != ContainerExited || app.ExitCode != 137 ||
				app.Reason != "OOMKilled" || app.StartedAt.IsZero() || !app.FinishedAt.After(app.StartedAt) ||
				app.SandboxID != ids["a-sb1"] || app.Image != "busybox:1" || app.ImageRef != "sha256:busybox" {
				t.Errorf("app = %+v", app)
			}
			if app1.Attempt != 1 || app1.State != ContainerRunning || app1.StartedAt.IsZero() || !app1.FinishedAt.IsZero() {
				t.Errorf("app attempt 1 = %+v", app1)
			}
			if side.State != ContainerCreated || !side.StartedAt.IsZero() || side.State.String() != "created" {
				t.Errorf("side = %+v", side)
			}
			if n := f.count("ContainerStatus"); n != 5 {
				t.Errorf("ContainerStatus calls = %d, want 5 (one per managed container)", n)
			}
			if n := f.count("PodSandboxStatus"); n != 2 {
				t.Errorf("PodSandboxStatus calls = %d, want 2 (ready managed sandboxes)", n)
			}

			b, err := c.ListPod(context.Background(), "pod-b")
			if err != nil {
				t.Fatal(err)
			}
			if !b.Equal(pods["pod-b"]) || len(b.Containers) != 1 {
				t.Errorf("ListPod(pod-b) = %+v, want %+v", b, pods["pod-b"])
			}
			x, err := c.ListPod(context.Background(), "pod-x")
			if err != nil || !x.Empty() || x.UID != "pod-x" {
				t.Errorf("ListPod of an unmanaged pod = %+v, %v; want empty view", x, err)
			}
		})
	}
}

// TestListPodsTakesContainerStatusesFromSandboxStatus: a runtime that answers
// PodSandboxStatus with the statuses of the sandbox's containers is not asked
// ContainerStatus for them; the views are the same as from a runtime that does
// not. A container missing from its sandbox's answer (here: vanished) is asked
// about, and dropped on NotFound.
func TestListPodsTakesContainerStatusesFromSandboxStatus(t *testing.T) {
	views := map[bool]map[string]*PodView{}
	for _, with := range []bool{false, true} {
		f := newFakeRuntime()
		ids := populate(f)
		f.vanish[ids["a-side"]] = true
		f.withContainers = with
		c := dialFake(t, f, Options{})
		pods, err := c.ListPods(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		views[with] = pods
		// Managed containers: a-init, a-app, a-app1, a-side (vanished), b-app;
		// all in ready sandboxes.
		want := 5
		if with {
			want = 1 // a-side, which its sandbox's answer leaves out
		}
		if got := f.count("ContainerStatus"); got != want {
			t.Errorf("containers given with their sandboxes: %v: %d ContainerStatus calls, want %d", with, got, want)
		}
		if got := f.count("PodSandboxStatus"); got != 2 {
			t.Errorf("containers given with their sandboxes: %v: %d PodSandboxStatus calls, want 2 (the ready ones)", with, got)
		}
		for _, ct := range pods["pod-a"].Containers {
			if ct.ID == ids["a-side"] {
				t.Errorf("containers given with their sandboxes: %v: vanished container listed: %+v", with, ct)
			}
		}
	}
	if len(views[false]) != len(views[true]) {
		t.Fatalf("pods: %d without, %d with statuses given with their sandboxes", len(views[false]), len(views[true]))
	}
	for uid, v := range views[false] {
		w := views[true][uid]
		w.ListedAt = v.ListedAt
		if !v.Equal(w) {
			t.Errorf("pod %s: view differs when the containers' statuses come with the sandbox's:\n%+v\n%+v", uid, v, w)
		}
	}
}

func TestListPodsDropsObjectsRemovedDuringListing(t *testing.T) {
	f := newFakeRuntime()
	ids := populate(f)
	f.vanish[ids["a-app"]] = true
	f.vanish[ids["b-sb0"]] = true
	f.vanish[ids["b-app"]] = true
	c := dialFake(t, f, Options{})

	pods, err := c.ListPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pods["pod-b"]; ok {
		t.Errorf("pod-b, all of whose objects vanished, is listed: %+v", pods["pod-b"])
	}
	for _, ct := range pods["pod-a"].Containers {
		if ct.ID == ids["a-app"] {
			t.Errorf("vanished container listed: %+v", ct)
		}
	}
	if len(pods["pod-a"].Containers) != 3 {
		t.Errorf("pod-a containers = %+v, want 3", pods["pod-a"].Containers)
	}
}

func TestListPodsFailsWholeOnStatusError(t *testing.T) {
	f := newFakeRuntime()
	populate(f)
	f.fail["ContainerStatus"] = status.Error(codes.Unavailable, "runtime restarting")
	c := dialFake(t, f, Options{})

	pods, err := c.ListPods(context.Background())
	if err == nil || KindOf(err) != Unavailable || pods != nil {
		t.Fatalf("ListPods = %v, %v; want no views and Unavailable", pods, err)
	}
	v, err := c.ListPod(context.Background(), "pod-a")
	if err == nil || v != nil {
		t.Fatalf("ListPod = %v, %v; want error", v, err)
	}
}

func TestStatusCacheSkipsUnchangedObjects(t *testing.T) {
	f := newFakeRuntime()
	ids := populate(f)
	c := dialFake(t, f, Options{})
	ctx := context.Background()

	first, err := c.ListPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := f.count("ContainerStatus")
	again, err := c.listPods(ctx, "", newStatusCache(first))
	if err != nil {
		t.Fatal(err)
	}
	if f.count("ContainerStatus") != before || !again["pod-a"].Equal(first["pod-a"]) || !again["pod-b"].Equal(first["pod-b"]) {
		t.Fatalf("unchanged relist made %d status calls or changed views", f.count("ContainerStatus")-before)
	}

	f.exit(ids["b-app"], 2, "Error")
	again, err = c.listPods(ctx, "", newStatusCache(first))
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count("ContainerStatus") - before; n != 1 {
		t.Errorf("status calls after one exit = %d, want 1", n)
	}
	if ct := again["pod-b"].Containers[0]; ct.State != ContainerExited || ct.ExitCode != 2 {
		t.Errorf("pod-b container after exit = %+v", ct)
	}
}
