package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterEnvFromAPI: container environments read ConfigMaps and Secrets
// through the node's own identity (the Node authorizer lets a node read what
// its pods refer to). The simulated runtime acts on its containers' env, so
// a container whose exit code comes from a ConfigMap and whose lifetime
// comes from a Secret shows both in its status; a reference to a ConfigMap
// that does not exist yet holds the container in CreateContainerConfigError
// until it is created, then the container runs. A Service's port reaches a
// container through its service-link variables.
func TestClusterEnvFromAPI(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	const nodeName = "node-1"
	cms, secrets, pods := c.admin.CoreV1().ConfigMaps("default"), c.admin.CoreV1().Secrets("default"), c.admin.CoreV1().Pods("default")
	t.Cleanup(func() {
		deleteNodePods(t, c.admin, nodeName)
		for _, n := range []string{"exit-plan", "late"} {
			_ = cms.Delete(ctx, n, metav1.DeleteOptions{})
		}
		_ = secrets.Delete(ctx, "exit-timing", metav1.DeleteOptions{})
		_ = c.admin.CoreV1().Services("default").Delete(ctx, "links-svc", metav1.DeleteOptions{})
		_ = c.admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
		_ = c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, nodeName, metav1.DeleteOptions{})
	})
	deleteNodePods(t, c.admin, nodeName)
	_ = cms.Delete(ctx, "late", metav1.DeleteOptions{})
	_ = c.admin.CoreV1().Services("default").Delete(ctx, "links-svc", metav1.DeleteOptions{})
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "exit-plan"},
		Data: map[string]string{"code": "7"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "exit-timing"},
		Data: map[string][]byte{"SIM_EXIT_AFTER": []byte("50ms")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := startSim(t, t.TempDir())
	startNode(t, s.endpoint, newNodeDirs(t), "--kubeconfig", c.nodeKubeconfig(nodeName))

	get := podGetter(ctx, pods)
	// Exit code 7 from the ConfigMap, after 50ms from the Secret (envFrom).
	job := apiPod("env-job", nodeName, corev1.Container{Name: "app", Image: "example.com/app:1",
		Env: []corev1.EnvVar{{Name: "SIM_EXIT_CODE", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "exit-plan"}, Key: "code"}}}},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "exit-timing"}}}},
	})
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := pods.Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "env-job Failed with exit code 7", func() (bool, string) {
		p := get("env-job")
		if p.Status.Phase != corev1.PodFailed || len(p.Status.ContainerStatuses) != 1 {
			return false, summary(p)
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		return term != nil && term.ExitCode == 7, summary(p)
	})

	// A service-link variable: exit code 42 from the port of a Service in
	// the pod's namespace, through $(VAR) expansion.
	if _, err := c.admin.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "links-svc"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "answer", Port: 42}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	links := apiPod("env-links", nodeName, corev1.Container{Name: "app", Image: "example.com/app:1",
		Env: []corev1.EnvVar{{Name: "SIM_EXIT_AFTER", Value: "50ms"}, {Name: "SIM_EXIT_CODE", Value: "$(LINKS_SVC_SERVICE_PORT_ANSWER)"}}})
	links.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := pods.Create(ctx, links, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "env-links Failed with exit code 42", func() (bool, string) {
		p := get("env-links")
		if p.Status.Phase != corev1.PodFailed || len(p.Status.ContainerStatuses) != 1 {
			return false, summary(p)
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		return term != nil && term.ExitCode == 42, summary(p)
	})

	// A ConfigMap that does not exist yet.
	late := apiPod("env-late", nodeName, corev1.Container{Name: "app", Image: "example.com/app:1",
		Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "late"}, Key: "greeting"}}}},
	})
	if _, err := pods.Create(ctx, late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "env-late waiting with CreateContainerConfigError", func() (bool, string) {
		p := get("env-late")
		if len(p.Status.ContainerStatuses) != 1 {
			return false, summary(p)
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return p.Status.Phase == corev1.PodPending && w != nil && w.Reason == "CreateContainerConfigError" &&
			w.Message == `configmap "late" not found`, summary(p)
	})
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "env-late Running once the ConfigMap exists", func() (bool, string) {
		p := get("env-late")
		return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue, summary(p)
	})
}
