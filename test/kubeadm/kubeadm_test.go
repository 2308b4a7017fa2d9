// Package kubeadm tests actorlet as the kubelet of a kubeadm cluster: kubeadm
// v1.37.2 init and join on two nodes, each in network and mount namespaces
// of its own with its own containerd (kubeadm.sh), actorlet started with
// exactly the files and flags kubeadm wrote, as kubeadm's systemd drop-in
// would start the kubelet.
package kubeadm

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// token is a bootstrap token of this run: [a-z0-9]{6}.[a-z0-9]{16}.
func token(t *testing.T) (id, full string) {
	t.Helper()
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b[:6]), string(b[:6]) + "." + string(b[6:])
}

// runKubeadm runs kubeadm in node's namespaces and, as soon as its
// kubelet-start phase has written the kubelet's files, starts actorlet with
// them (kubeadm would restart the kubelet's systemd unit). It returns the
// node agent once kubeadm has succeeded.
func (e *env) runKubeadm(node string, args ...string) *kubelet {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 10*time.Minute)
	defer cancel()
	logPath := filepath.Join(e.logs, node+"-kubeadm.log")
	f, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	cmd := e.inNode(ctx, node, append([]string{filepath.Join(e.bin, "kubeadm")}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var k *kubelet
	flagsEnv := e.file(node, "/var/lib/kubelet/kubeadm-flags.env")
	config := e.file(node, "/var/lib/kubelet/config.yaml")
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				e.t.Fatalf("kubeadm %s on %s: %v\n%s\n--- kubelet:\n%s", args[0], node, err, tail(logPath, 40), tail(filepath.Join(e.logs, node+"-kubelet.log"), 30))
			}
			if k == nil {
				e.t.Fatalf("kubeadm %s on %s succeeded without writing the kubelet's files", args[0], node)
			}
			e.t.Logf("kubeadm %s on %s:\n%s", args[0], node, tail(logPath, 12))
			return k
		case <-tick.C:
			if k != nil {
				continue
			}
			if _, err := os.Stat(flagsEnv); err != nil {
				continue
			}
			if _, err := os.Stat(config); err != nil {
				continue
			}
			k = e.startKubelet(node)
			e.t.Cleanup(k.stop)
		}
	}
}

// nodeStatus is what the test reads of a Node.
func (e *env) nodes() map[string]corev1.Node {
	e.t.Helper()
	out, err := e.kubectl("get", "nodes", "-o", "json")
	if err != nil {
		return nil
	}
	var list corev1.NodeList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		e.t.Fatalf("nodes: %v", err)
	}
	m := map[string]corev1.Node{}
	for _, n := range list.Items {
		m[n.Name] = n
	}
	return m
}

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestKubeadmInitAndJoin: actorlet is the kubelet of a kubeadm control plane
// and of a worker that joins with a bootstrap token.
func TestKubeadmInitAndJoin(t *testing.T) {
	e := newEnv(t)
	e.sh("images")
	t.Cleanup(func() {
		if os.Getenv("ACTORLET_KUBEADM_KEEP") == "1" {
			t.Logf("ACTORLET_KUBEADM_KEEP=1: the nodes stay up (kubeadm.sh node-down cp/worker, net-down)")
			return
		}
		for _, n := range []string{"worker", "cp"} {
			if out, err := e.shErr("node-down", n); err != nil {
				t.Errorf("node-down %s: %v\n%s", n, err, out)
			}
		}
		if out, err := e.shErr("net-down"); err != nil {
			t.Errorf("net-down: %v\n%s", err, out)
		}
	})
	// Leftovers of an interrupted run go first.
	for _, n := range []string{"worker", "cp"} {
		_, _ = e.shErr("node-down", n)
	}
	e.sh("net-up")
	e.sh("node-up", "cp")
	e.sh("node-up", "worker")

	tokenID, tok := token(t)
	initCfg := filepath.Join(e.prefix, "init.yaml")
	// kubeadm's defaults otherwise: its KubeletConfiguration says
	// cgroupDriver systemd, and actorlet takes the runtime's answer
	// (containerd runs cgroupfs here). cgroup v1 needs failCgroupV1: false
	// and the SystemVerification check skipped, as for the kubelet v1.37;
	// each node's pods go under a cgroup root of its own.
	writeFile(t, initCfg, fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: %s
  ttl: 1h
localAPIEndpoint: {advertiseAddress: %s, bindPort: 6443}
nodeRegistration:
  name: alk-cp
  criSocket: unix:///tmp/alk-cp/containerd.sock
  kubeletExtraArgs:
  - {name: node-ip, value: %s}
  ignorePreflightErrors: [SystemVerification]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
controlPlaneEndpoint: %s:6443
dns: {disabled: true}
proxy: {disabled: true}
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupRoot: /alk-cp
`, tok, cpIP, cpIP, k8sVersion, cpIP))
	cp := e.runKubeadm("cp", "init", "--config", initCfg)

	// The control plane's static pods run under actorlet, with mirror pods.
	waitFor(t, 3*time.Minute, "the control plane's mirror pods Running", func() bool {
		out, err := e.kubectl("get", "pods", "-n", "kube-system", "-o", "json")
		if err != nil {
			return false
		}
		var list corev1.PodList
		_ = json.Unmarshal([]byte(out), &list)
		running := 0
		for _, p := range list.Items {
			if p.Spec.NodeName == "alk-cp" && p.Status.Phase == corev1.PodRunning && p.Annotations["kubernetes.io/config.mirror"] != "" {
				running++
			}
		}
		return running == 4
	})
	// rotateCertificates: the certificate kubeadm put in kubelet.conf was
	// replaced by one the controller-manager signed (kubelet-finalize then
	// pointed kubelet.conf at it).
	checkClientCert(t, e, "cp", "system:node:alk-cp", "system:node:alk-cp")

	joinCfg := filepath.Join(e.prefix, "join.yaml")
	writeFile(t, joinCfg, fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: %s:6443
    token: %s
    caCertHashes: [%s]
nodeRegistration:
  name: alk-worker
  criSocket: unix:///tmp/alk-worker/containerd.sock
  kubeletExtraArgs:
  - {name: node-ip, value: %s}
  - {name: cgroup-root, value: /alk-worker}
  - {name: rotate-server-certificates, value: "true"}
  ignorePreflightErrors: [SystemVerification]
`, cpIP, tok, caCertHash(t, e.file("cp", "/etc/kubernetes/pki/ca.crt")), workerIP))
	worker := e.runKubeadm("worker", "join", "--config", joinCfg)
	t.Cleanup(worker.stop)

	// TLS bootstrap: the worker's CSR, made with the bootstrap token,
	// auto-approved and signed.
	checkClientCert(t, e, "worker", "system:node:alk-worker", "system:bootstrap:"+tokenID)

	servingCertFromTheCluster(t, e)

	waitFor(t, 2*time.Minute, "both nodes Ready", func() bool {
		n := e.nodes()
		return len(n) == 2 && ready(n["alk-cp"]) && ready(n["alk-worker"])
	})
	t.Logf("kubectl get nodes:\n%s", e.mustKubectl("get", "nodes", "-o", "wide"))
	checkNoIgnoredAuth(t, cp.log)

	workloadOnTheWorker(t, e)
	controlPlaneSurvivesKill9(t, e, cp)
}

// checkClientCert waits for node's client certificate in
// /var/lib/kubelet/pki/kubelet-client-current.pem (a link to the dated file)
// for cn, and the approved CSR of requester that it came from.
func checkClientCert(t *testing.T, e *env, node, cn, requester string) {
	t.Helper()
	pemPath := "/var/lib/kubelet/pki/kubelet-client-current.pem"
	waitFor(t, 3*time.Minute, node+"'s client certificate from an approved CSR", func() bool {
		out, err := e.kubectl("get", "csr", "-o", "json")
		if err != nil {
			return false
		}
		var list certificatesv1.CertificateSigningRequestList
		_ = json.Unmarshal([]byte(out), &list)
		for _, c := range list.Items {
			if c.Spec.Username == requester && c.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && len(c.Status.Certificate) > 0 {
				issued := firstCert(c.Status.Certificate)
				b, _ := os.ReadFile(e.nodeFile(node, pemPath))
				if leaf := firstCert(b); leaf != nil && issued != nil && leaf.Subject.CommonName == cn && leaf.Equal(issued) {
					return true
				}
			}
		}
		return false
	})
	target, err := os.Readlink(e.file(node, pemPath))
	if err != nil || !strings.HasPrefix(filepath.Base(target), "kubelet-client-2") {
		t.Errorf("%s: kubelet-client-current.pem -> %q (%v); want the dated file", node, target, err)
	}
	waitFor(t, time.Minute, node+"'s kubelet.conf using the rotated certificate", func() bool {
		kc, err := clientcmd.LoadFromFile(e.file(node, "/etc/kubernetes/kubelet.conf"))
		if err != nil {
			return false
		}
		for _, a := range kc.AuthInfos {
			if a.ClientCertificate == pemPath {
				return true
			}
		}
		return false
	})
}

// servingCertFromTheCluster: the worker runs with --rotate-server-certificates
// (serverTLSBootstrap): its kubelet API's certificate comes from a
// kubernetes.io/kubelet-serving CSR, which nothing approves automatically;
// approved as an operator would, the API serves a certificate the cluster CA
// signed for the node's IP.
func servingCertFromTheCluster(t *testing.T, e *env) {
	t.Helper()
	var name string
	waitFor(t, 2*time.Minute, "the worker's kubelet-serving CSR", func() bool {
		out, err := e.kubectl("get", "csr", "-o", "json")
		if err != nil {
			return false
		}
		var list certificatesv1.CertificateSigningRequestList
		_ = json.Unmarshal([]byte(out), &list)
		for _, c := range list.Items {
			if c.Spec.Username == "system:node:alk-worker" && c.Spec.SignerName == certificatesv1.KubeletServingSignerName {
				name = c.Name
				return true
			}
		}
		return false
	})
	e.mustKubectl("certificate", "approve", name)
	waitFor(t, 2*time.Minute, "the worker's kubelet API with a certificate of the cluster CA", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		// Verified against the cluster CA and the node's IP; the request
		// itself is anonymous, so 401.
		out, err := e.inNode(ctx, "cp", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "/etc/kubernetes/pki/ca.crt",
			"https://"+workerIP+":10250/healthz").Output()
		return err == nil && string(out) == "401"
	})
}

// checkNoIgnoredAuth: with kubeadm's configuration, the one warning of what
// actorlet ignores does not name the API's authentication or authorization.
func checkNoIgnoredAuth(t *testing.T, log string) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "accepted and ignored") {
			t.Logf("the start-up warning: %s", line)
			if strings.Contains(line, "authentication") || strings.Contains(line, "authorization") {
				t.Errorf("authentication or authorization reported as ignored: %s", line)
			}
		}
	}
}

// workloadOnTheWorker: a Deployment's pods run on the worker (the control
// plane is tainted), and kubectl logs and exec reach them through the API
// server and the worker's kubelet API on 10250.
func workloadOnTheWorker(t *testing.T, e *env) {
	t.Helper()
	e.mustKubectl("create", "deployment", "web", "--image=localhost/actorlet/workload:1.0", "--replicas=2", "--",
		"/workload", "-msg", "hello from the worker", "-http", ":8080")
	var pods []corev1.Pod
	waitFor(t, 3*time.Minute, "the Deployment's pods Running", func() bool {
		out, err := e.kubectl("get", "pods", "-l", "app=web", "-o", "json")
		if err != nil {
			return false
		}
		var list corev1.PodList
		_ = json.Unmarshal([]byte(out), &list)
		pods = slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
		return len(pods) == 2
	})
	for _, p := range pods {
		if p.Spec.NodeName != "alk-worker" || p.Status.HostIP != workerIP {
			t.Errorf("pod %s on %s (host IP %s); want alk-worker, %s", p.Name, p.Spec.NodeName, p.Status.HostIP, workerIP)
		}
	}
	pod := pods[0].Name
	waitFor(t, time.Minute, "kubectl logs", func() bool {
		out, err := e.kubectl("logs", pod)
		return err == nil && strings.Contains(out, "hello from the worker")
	})
	out, err := e.kubectl("exec", pod, "--", "/workload", "-msg", "hello from exec", "-exit", "3")
	if !strings.Contains(out, "hello from exec") || err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("kubectl exec: %v\n%s", err, out)
	}
}

// controlPlaneSurvivesKill9: kill -9 of the control plane's node agent
// leaves its containers running with the same IDs, the API server answers
// while it is down and after it is back, and it restarts nothing.
func controlPlaneSurvivesKill9(t *testing.T, e *env, cp *kubelet) {
	t.Helper()
	before := e.crictl("cp", "ps", "-q", "--no-trunc")
	ids := strings.Fields(before)
	if len(ids) != 4 {
		t.Fatalf("control plane containers before the kill: %q", ids)
	}
	if err := cp.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-cp.done
	for i := range 20 {
		if out, err := e.kubectl("get", "--raw", "/readyz"); err != nil || strings.TrimSpace(out) != "ok" {
			t.Fatalf("readyz %d with the node agent killed: %v %s", i, err, out)
		}
	}
	again := e.startKubelet("cp")
	t.Cleanup(again.stop)
	waitFor(t, 2*time.Minute, "the restarted node agent's healthz", func() bool {
		if out, err := e.kubectl("get", "--raw", "/readyz"); err != nil || strings.TrimSpace(out) != "ok" {
			t.Fatalf("readyz while the node agent restarts: %v %s", err, out)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		return e.inNode(ctx, "cp", "curl", "-fs", "http://127.0.0.1:10248/healthz").Run() == nil
	})
	waitFor(t, time.Minute, "alk-cp Ready again", func() bool { return ready(e.nodes()["alk-cp"]) })
	after := strings.Fields(e.crictl("cp", "ps", "-q", "--no-trunc"))
	slices.Sort(ids)
	slices.Sort(after)
	if !slices.Equal(ids, after) {
		t.Errorf("control plane containers changed across kill -9 and restart:\nbefore %q\nafter  %q", ids, after)
	}
	if all := strings.Fields(e.crictl("cp", "ps", "-a", "-q", "--no-trunc")); len(all) != len(ids) {
		t.Errorf("%d containers in all (exited included) after the restart; want the %d that ran", len(all), len(ids))
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// firstCert is the first certificate of PEM data, nil if none.
func firstCert(b []byte) *x509.Certificate {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return nil
		}
		if block.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil
			}
			return c
		}
	}
}
