package staticpod

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestReadFileBindsPodToNode(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "web.yaml", manifest("web", "nginx:1.27"))

	pod, err := ReadFile(path, node)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "web-node-1" {
		t.Errorf("name = %q, want web-node-1 (node name lowercased)", pod.Name)
	}
	if pod.Namespace != "default" {
		t.Errorf("namespace = %q, want default", pod.Namespace)
	}
	if pod.Spec.NodeName != node {
		t.Errorf("spec.nodeName = %q, want %q", pod.Spec.NodeName, node)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(string(pod.UID)) {
		t.Errorf("UID = %q, want 32 hex digits (md5)", pod.UID)
	}
	want := map[string]string{
		AnnotationConfigSource: "file",
		AnnotationConfigHash:   string(pod.UID),
	}
	for k, v := range want {
		if got := pod.Annotations[k]; got != v {
			t.Errorf("annotation %s = %q, want %q", k, got, v)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, pod.Annotations[AnnotationConfigSeen]); err != nil {
		t.Errorf("annotation %s: %v", AnnotationConfigSeen, err)
	}
	wantTol := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	if len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0] != wantTol {
		t.Errorf("tolerations = %+v, want [%+v]", pod.Spec.Tolerations, wantTol)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %q, want Pending", pod.Status.Phase)
	}
}

func TestExplicitNamespaceAndTolerationKept(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "p.yaml", `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: kube-system}
spec:
  tolerations:
  - {operator: Exists, effect: NoExecute, tolerationSeconds: 30}
  - {key: k, operator: Exists, effect: NoSchedule}
  containers: [{name: c, image: img:1}]
`)
	pod, err := ReadFile(path, node)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Namespace != "kube-system" {
		t.Errorf("namespace = %q", pod.Namespace)
	}
	if n := len(pod.Spec.Tolerations); n != 2 {
		t.Fatalf("tolerations = %+v, want the NoExecute one replaced, not added", pod.Spec.Tolerations)
	}
	if pod.Spec.Tolerations[0].TolerationSeconds != nil {
		t.Errorf("NoExecute toleration keeps a time limit: %+v", pod.Spec.Tolerations[0])
	}
}

func TestUIDFollowsContentPathAndNode(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", manifest("web", "nginx:1.27"))
	uid := func(path, nodeName string) string {
		t.Helper()
		p, err := ReadFile(path, nodeName)
		if err != nil {
			t.Fatal(err)
		}
		return string(p.UID)
	}

	first := uid(a, node)
	if again := uid(a, node); again != first {
		t.Errorf("same content read twice: UID %s then %s", first, again)
	}

	b := writeFile(t, dir, "b.yaml", manifest("web", "nginx:1.27"))
	if other := uid(b, node); other == first {
		t.Errorf("same content in two files got the same UID %s", first)
	}
	if other := uid(a, "node-2"); other == first {
		t.Errorf("same file on two nodes got the same UID %s", first)
	}

	// The same pod written as JSON, with other formatting, is the same content.
	writeFile(t, dir, "a.yaml", `{"kind":"Pod","apiVersion":"v1",
	  "metadata":{"name":"web"},
	  "spec":{"containers":[{"image":"nginx:1.27","name":"main"}]}}`)
	if same := uid(a, node); same != first {
		t.Errorf("same pod as JSON: UID %s, want %s", same, first)
	}
	// Explicitly written defaults are the same content as implied ones.
	writeFile(t, dir, "a.yaml", manifest("web", "nginx:1.27")+"  restartPolicy: Always\n")
	if same := uid(a, node); same != first {
		t.Errorf("explicit default: UID %s, want %s", same, first)
	}

	writeFile(t, dir, "a.yaml", manifest("web", "nginx:1.28"))
	if changed := uid(a, node); changed == first {
		t.Errorf("changed content kept UID %s", first)
	}
}

func TestDefaultsApplied(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "p.yaml", `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: init
    image: busybox
  containers:
  - name: app
    image: registry.local:5000/app:v2
    ports: [{containerPort: 8080}]
    readinessProbe:
      httpGet: {port: 8080}
  - name: pinned
    image: app@sha256:0123456789012345678901234567890123456789012345678901234567890123
    imagePullPolicy: Never
    terminationMessagePolicy: FallbackToLogsOnError
`)
	pod, err := ReadFile(path, node)
	if err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	if s.RestartPolicy != corev1.RestartPolicyAlways || s.DNSPolicy != corev1.DNSClusterFirst ||
		s.SchedulerName != "default-scheduler" || s.SecurityContext == nil ||
		s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30 {
		t.Errorf("pod defaults: restartPolicy=%q dnsPolicy=%q scheduler=%q securityContext=%v grace=%v",
			s.RestartPolicy, s.DNSPolicy, s.SchedulerName, s.SecurityContext, s.TerminationGracePeriodSeconds)
	}
	for _, tc := range []struct {
		c         corev1.Container
		pull      corev1.PullPolicy
		msgPolicy corev1.TerminationMessagePolicy
	}{
		{s.InitContainers[0], corev1.PullAlways, corev1.TerminationMessageReadFile},
		{s.Containers[0], corev1.PullIfNotPresent, corev1.TerminationMessageReadFile},
		{s.Containers[1], corev1.PullNever, corev1.TerminationMessageFallbackToLogsOnError},
	} {
		if tc.c.ImagePullPolicy != tc.pull {
			t.Errorf("%s: imagePullPolicy = %q, want %q", tc.c.Name, tc.c.ImagePullPolicy, tc.pull)
		}
		if tc.c.TerminationMessagePath != "/dev/termination-log" {
			t.Errorf("%s: terminationMessagePath = %q", tc.c.Name, tc.c.TerminationMessagePath)
		}
		if tc.c.TerminationMessagePolicy != tc.msgPolicy {
			t.Errorf("%s: terminationMessagePolicy = %q, want %q", tc.c.Name, tc.c.TerminationMessagePolicy, tc.msgPolicy)
		}
	}
	if p := s.Containers[0].Ports[0]; p.Protocol != corev1.ProtocolTCP || p.HostPort != 0 {
		t.Errorf("port = %+v, want protocol TCP and no hostPort", p)
	}
	pr := s.Containers[0].ReadinessProbe
	if pr.TimeoutSeconds != 1 || pr.PeriodSeconds != 10 || pr.SuccessThreshold != 1 || pr.FailureThreshold != 3 ||
		pr.HTTPGet.Path != "/" || pr.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("probe defaults: %+v %+v", pr, pr.HTTPGet)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                         corev1.PullAlways,
		"nginx:latest":                  corev1.PullAlways,
		"nginx:1.27":                    corev1.PullIfNotPresent,
		"localhost:5000/nginx":          corev1.PullAlways,
		"localhost:5000/nginx:1.0":      corev1.PullIfNotPresent,
		"localhost:5000/nginx:latest":   corev1.PullAlways,
		"nginx@sha256:abc":              corev1.PullIfNotPresent,
		"nginx:latest@sha256:abc":       corev1.PullAlways,
		"registry.k8s.io/pause:3.10":    corev1.PullIfNotPresent,
		"registry.k8s.io/a/b/c":         corev1.PullAlways,
		"registry.k8s.io:443/a/b/c:1.0": corev1.PullIfNotPresent,
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestHostNetworkHostPortDefault(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "p.yaml", manifest("p", "img:1")+"    ports: [{containerPort: 53, protocol: UDP}]\n  hostNetwork: true\n")
	pod, err := ReadFile(path, node)
	if err != nil {
		t.Fatal(err)
	}
	if p := pod.Spec.Containers[0].Ports[0]; p.HostPort != 53 || p.Protocol != corev1.ProtocolUDP {
		t.Errorf("port = %+v, want hostPort 53, protocol UDP kept", p)
	}
}

func TestManifestErrorsNameFileAndProblem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		kind    error
		want    []string // substrings of the message besides the file
	}{
		{"empty", "\n# nothing\n", ErrDecode, []string{"empty manifest"}},
		{"syntax", "apiVersion: v1\nkind: Pod\nmetadata: [\n", ErrDecode, nil},
		{"wrong type", manifest("p", "img:1") + "  terminationGracePeriodSeconds: soon\n", ErrDecode, []string{"terminationGracePeriodSeconds"}},
		{"too large", manifest("p", "img:1") + "# " + strings.Repeat("x", MaxManifestBytes) + "\n", ErrTooLarge, []string{"larger than 3145728 bytes"}},
		{"annotations too large", strings.Replace(manifest("p", "img:1"), "  name: p\n", "  name: p\n  annotations: {big: "+strings.Repeat("x", 300<<10)+"}\n", 1),
			ErrTooLarge, []string{"metadata.annotations: Too long", "262144"}},
		{"every problem", strings.Replace(manifest("Web_1", `""`), "kind: Pod\n", "kind: Pod\nbogus: 1\n", 1) + "  restartPolicy: Sometimes\n", ErrInvalid,
			[]string{"metadata.name: Invalid", "spec.containers[0].image: Required", "spec.restartPolicy: Unsupported value"}},
		{"two documents", manifest("p", "img:1") + "---\n" + manifest("q", "img:1"), ErrDecode, []string{"more than one"}},
		{"deployment", strings.Replace(manifest("p", "img:1"), "kind: Pod", "kind: Deployment", 1), ErrNotPod, []string{`"Deployment"`}},
		{"apiVersion", strings.Replace(manifest("p", "img:1"), "apiVersion: v1", "apiVersion: apps/v1", 1), ErrNotPod, []string{`"apps/v1"`}},
		{"no kind", strings.Replace(manifest("p", "img:1"), "kind: Pod\n", "", 1), ErrNotPod, nil},
		{"no name", strings.Replace(manifest("p", "img:1"), "name: p\n", "labels: {}\n", 1), ErrInvalid, []string{"metadata.name: Required"}},
		{"bad name", manifest("Web_1", "img:1"), ErrInvalid, []string{"metadata.name: Invalid"}},
		{"long name", manifest(strings.Repeat("a", 250), "img:1"), ErrInvalid, []string{"metadata.name", "253"}},
		{"no image", manifest("p", `""`), ErrInvalid, []string{"spec.containers[0].image: Required"}},
		{"bad restart", manifest("p", "img:1") + "  restartPolicy: Sometimes\n", ErrInvalid, []string{"spec.restartPolicy: Unsupported value"}},
		{"bad port", manifest("p", "img:1") + "    ports: [{containerPort: 70000}]\n", ErrInvalid, []string{"spec.containers[0].ports[0].containerPort"}},
		{"negative grace", manifest("p", "img:1") + "  terminationGracePeriodSeconds: -1\n", ErrInvalid, []string{"spec.terminationGracePeriodSeconds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "m.yaml", tc.content)
			pod, err := ReadFile(path, node)
			if err == nil {
				t.Fatalf("accepted: %+v", pod)
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %q is not %v", err, tc.kind)
			}
			var me *ManifestError
			if !errors.As(err, &me) || me.File != path {
				t.Errorf("error %q is not a *ManifestError for %s", err, path)
			}
			for _, s := range append([]string{path}, tc.want...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestReadDirSkipsOrdersAndRejects(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.yaml", manifest("b", "img:1"))
	writeFile(t, dir, "a.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"img:1"}]}}`)
	writeFile(t, dir, "c-broken.yaml", manifest("c", `""`))
	writeFile(t, dir, "d-dup.yaml", manifest("b", "img:2")) // same name as b.yaml
	// Never manifests: each would be rejected if read.
	for _, name := range []string{".hidden.yaml", "b.yaml~", "#b.yaml#", "b.yaml.swp", "4913"} {
		writeFile(t, dir, name, "garbage: [")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub"), "x.yaml", manifest("x", "img:1"))
	if err := os.Symlink(filepath.Join(dir, "a.json"), filepath.Join(dir, "e-link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "f-dangling.yaml")); err != nil {
		t.Fatal(err)
	}

	snap, err := ReadDir(dir, node)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range snap.Pods {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "a-node-1,b-node-1"; got != want {
		t.Errorf("pods = %s, want %s", got, want)
	}
	wantRejected := []struct {
		file string
		kind error
	}{
		{"c-broken.yaml", ErrInvalid},
		{"d-dup.yaml", ErrDuplicate},
		{"e-link.json", ErrDuplicate}, // the symlink is read, and a.json defined pod "a" already
		{"f-dangling.yaml", ErrUnreadable},
	}
	if len(snap.Rejected) != len(wantRejected) {
		t.Fatalf("rejected = %+v, want %d", snap.Rejected, len(wantRejected))
	}
	for i, w := range wantRejected {
		r := snap.Rejected[i]
		if r.File != filepath.Join(dir, w.file) || !errors.Is(r.Err, w.kind) {
			t.Errorf("rejected[%d] = %s: %v, want %s: %v", i, r.File, r.Err, w.file, w.kind)
		}
	}
}

func TestReadDirMissingAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	snap, err := ReadDir(filepath.Join(dir, "absent"), node)
	if err != nil || len(snap.Pods) != 0 || len(snap.Rejected) != 0 {
		t.Errorf("missing dir: %+v, %v; want empty snapshot, no error", snap, err)
	}

	file := writeFile(t, dir, "plain", "x")
	bad := filepath.Join(file, "sub") // ENOTDIR
	if _, err := ReadDir(bad, node); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unreadable dir: error %v, want one naming %s", err, bad)
	}

	if _, err := ReadDir(dir, ""); !errors.Is(err, ErrNoNodeName) {
		t.Errorf("empty node name: %v", err)
	}
}

func TestReadDirAcceptsSingleFile(t *testing.T) {
	path := writeFile(t, t.TempDir(), "only.yaml", manifest("only", "img:1"))
	snap, err := ReadDir(path, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Pods) != 1 || snap.Pods[0].Name != "only-node-1" {
		t.Errorf("snapshot = %+v, want the one pod", snap)
	}
}
