package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// kubectl runs the cluster's kubectl as the admin and returns its
// combined output and exit code.
func kubectl(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin := os.Getenv("ACTORLET_KUBECTL")
	if bin == "" {
		t.Fatal("ACTORLET_KUBECTL is not set (cluster.sh up writes it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", os.Getenv("ACTORLET_ADMIN_KUBECONFIG")}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return string(out), 0
}

// checkKubeletAPI goes through the API server to the node's kubelet API,
// as users do: kubectl logs (and -f) and kubectl exec of a pod on
// containerd; then it calls the node's port itself, on loopback, with no
// credentials (401) and as a service account without rights (403).
func checkKubeletAPI(t *testing.T, admin kubernetes.Interface, pod, nodeName string) {
	ctx := context.Background()
	out, code := kubectl(t, "logs", pod)
	if code != 0 || !strings.Contains(out, "web up") {
		t.Fatalf("kubectl logs %s: exit %d\n%s", pod, code, out)
	}
	out, code = kubectl(t, "exec", pod, "--", "/workload", "-msg", "hello from exec", "-exit", "3")
	if code != 3 || !strings.Contains(out, "hello from exec") {
		t.Fatalf("kubectl exec: exit %d, want 3\n%s", code, out)
	}

	// kubectl logs -f: lines keep coming.
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	follow := exec.CommandContext(fctx, os.Getenv("ACTORLET_KUBECTL"), "--kubeconfig", os.Getenv("ACTORLET_ADMIN_KUBECONFIG"), "logs", "-f", "ticker-"+nodeName)
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var seen []string
	for sc.Scan() && len(seen) < 3 {
		if strings.HasPrefix(sc.Text(), "line ") {
			seen = append(seen, sc.Text())
		}
	}
	cancel()
	_ = follow.Wait()
	if len(seen) < 3 {
		t.Fatalf("kubectl logs -f gave %v", seen)
	}

	// The node's own port, on loopback: refused without credentials, and
	// for a user the API server does not allow nodes/proxy.
	n, err := admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		t.Fatal("the Node advertises no kubelet port")
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/pods", port)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d, want 401", code)
	}
	sa := "nobody-" + nodeName
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().ServiceAccounts("default").Delete(ctx, sa, metav1.DeleteOptions{}) })
	tok, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code := get(tok.Status.Token); code != http.StatusForbidden {
		t.Fatalf("a service account without rights: %d, want 403", code)
	}

	// /stats/summary as the admin: the ticker burns a CPU, and shows it.
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("ACTORLET_ADMIN_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ticker's CPU usage in /stats/summary", func() (bool, string) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/stats/summary", port), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var s statsv1alpha1.Summary
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			return false, fmt.Sprintf("%d: %v", resp.StatusCode, err)
		}
		for _, p := range s.Pods {
			if p.PodRef.Name != "ticker-"+nodeName {
				continue
			}
			for _, c := range p.Containers {
				if c.CPU != nil && c.CPU.UsageNanoCores != nil && *c.CPU.UsageNanoCores > 100_000_000 && c.Memory != nil && c.Memory.WorkingSetBytes != nil {
					return true, ""
				}
				return false, fmt.Sprintf("%+v", c.CPU)
			}
		}
		return false, fmt.Sprintf("no ticker among %d pods; node cpu %+v", len(s.Pods), s.Node.CPU)
	})
}
