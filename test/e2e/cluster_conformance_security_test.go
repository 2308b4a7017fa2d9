package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterConformanceSecurityContext: the security context fields the
// kubelet enforces, on containerd. runAsNonRoot with an image that runs as
// root is refused: the container waits CreateContainerConfigError with the
// kubelet's message. allowPrivilegeEscalation: false runs the process with
// no_new_privs (its /proc/self/status says NoNewPrivs 1), and runAsNonRoot
// with a non-root runAsUser runs.
func TestClusterConformanceSecurityContext(t *testing.T) {
	c := needCluster(t)
	e := needContainerd(t)
	const nodeName = "node-2"
	ctx := context.Background()
	conformanceNode(t, c, e, nodeName)
	pods := c.admin.CoreV1().Pods("default")
	get := podGetter(ctx, pods)
	yes, no, user := true, false, int64(1000)

	root := apiPod("nonroot-"+nodeName, nodeName, corev1.Container{Name: "app", Image: e.workload,
		ImagePullPolicy: corev1.PullNever, Args: []string{"-msg", "should not run"}})
	root.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: &yes}
	if _, err := pods.Create(ctx, root, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, root.Name+" refused with CreateContainerConfigError", func() (bool, string) {
		p := get(root.Name)
		if len(p.Status.ContainerStatuses) != 1 {
			return false, summary(p)
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return p.Status.Phase == corev1.PodPending && w != nil && w.Reason == "CreateContainerConfigError" &&
			strings.HasPrefix(w.Message, "container has runAsNonRoot and image will run as root (pod: "), summary(p)
	})

	nnp := apiPod("nnp-"+nodeName, nodeName, corev1.Container{Name: "app", Image: e.workload,
		ImagePullPolicy: corev1.PullNever, Args: []string{"-cat", "/proc/self/status", "-print-uid", "-exit", "0"},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes, RunAsUser: &user}})
	nnp.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := pods.Create(ctx, nnp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, nnp.Name+" Succeeded", func() (bool, string) {
		p := get(nnp.Name)
		return p.Status.Phase == corev1.PodSucceeded, summary(p)
	})
	out, code := kubectl(t, "logs", nnp.Name)
	if code != 0 || !regexp.MustCompile(`(?m)^NoNewPrivs:\s+1$`).MatchString(out) || !strings.Contains(out, "uid=1000") {
		t.Fatalf("kubectl logs %s: exit %d, want NoNewPrivs 1 and uid=1000:\n%s", nnp.Name, code, out)
	}
}
