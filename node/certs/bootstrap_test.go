package certs

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
)

// bootstrapEnv is a cert dir, a bootstrap kubeconfig and a fake signer.
type bootstrapEnv struct {
	dir, certDir, kubeconfig, bootstrap string
	clock                               *clocktesting.FakeClock
	s                                   *signer
}

func newBootstrapEnv(t *testing.T) *bootstrapEnv {
	t.Helper()
	dir := t.TempDir()
	e := &bootstrapEnv{dir: dir, certDir: filepath.Join(dir, "pki"), kubeconfig: filepath.Join(dir, "kubelet.conf"),
		bootstrap: filepath.Join(dir, "bootstrap-kubelet.conf"), clock: clocktesting.NewFakeClock(time.Now())}
	e.s = newSigner(t, e.clock.Now, 365*24*time.Hour)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.s.caCert.Raw})
	if err := os.WriteFile(e.bootstrap, []byte(`apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster: {server: "https://10.88.104.10:6443", certificate-authority-data: "`+encode64(ca)+`"}
users:
- name: tls-bootstrap-token-user
  user: {token: abcdef.0123456789abcdef}
contexts:
- name: tls-bootstrap-token-user@kubernetes
  context: {cluster: kubernetes, user: tls-bootstrap-token-user}
current-context: tls-bootstrap-token-user@kubernetes
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *bootstrapEnv) opts() BootstrapOptions {
	return BootstrapOptions{Kubeconfig: e.kubeconfig, BootstrapKubeconfig: e.bootstrap, CertDir: e.certDir, NodeName: "node-1",
		Clock: e.clock, NewClient: func(*rest.Config) (kubernetes.Interface, error) { return e.s.client, nil }}
}

// TestBootstrapRequestsAClientCertificate: the kubelet's TLS bootstrap on a
// fake API server, from the CSR to the files.
func TestBootstrapRequestsAClientCertificate(t *testing.T) {
	e := newBootstrapEnv(t)
	done, err := Bootstrap(t.Context(), e.opts())
	if err != nil || !done {
		t.Fatalf("Bootstrap = %v, %v", done, err)
	}
	csrs := e.s.requests()
	if len(csrs) != 1 {
		t.Fatalf("%d CSRs; want 1", len(csrs))
	}
	csr := csrs[0]
	if !strings.HasPrefix(csr.Name, "node-csr-") || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName ||
		!slices.Equal(csr.Spec.Usages, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}) {
		t.Errorf("CSR %s signer %s usages %v", csr.Name, csr.Spec.SignerName, csr.Spec.Usages)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil || req.Subject.CommonName != "system:node:node-1" || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("request subject %v (%v)", req.Subject, err)
	}

	current := filepath.Join(e.certDir, "kubelet-client-current.pem")
	target, err := os.Readlink(current)
	if err != nil || !strings.HasPrefix(filepath.Base(target), "kubelet-client-") || !strings.HasSuffix(target, ".pem") {
		t.Errorf("kubelet-client-current.pem -> %q (%v); want the dated file", target, err)
	}
	if st, err := os.Stat(current); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("certificate file mode %v (%v); want 0600", st.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(e.certDir, tmpKeyFile)); !os.IsNotExist(err) {
		t.Errorf("the bootstrap key is left: %v", err)
	}
	kc, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if auth := kc.AuthInfos[ctx.AuthInfo]; auth.ClientCertificate != current || auth.ClientKey != current || auth.Token != "" {
		t.Errorf("kubeconfig user %+v; want the certificate of %s", auth, current)
	}
	if cl := kc.Clusters[ctx.Cluster]; cl.Server != "https://10.88.104.10:6443" || len(cl.CertificateAuthorityData) == 0 {
		t.Errorf("kubeconfig cluster %+v; want the bootstrap kubeconfig's server and CA", cl)
	}
	if ok, why := KubeconfigUsable(e.kubeconfig, e.clock.Now()); !ok {
		t.Errorf("the written kubeconfig is not usable: %s", why)
	}

	// Bootstrapped: nothing more to do.
	if done, err := Bootstrap(t.Context(), e.opts()); done || err != nil || len(e.s.requests()) != 1 {
		t.Errorf("second Bootstrap = %v, %v with %d CSRs; want nothing done", done, err, len(e.s.requests()))
	}
	// Once the certificate has expired, it bootstraps again.
	e.clock.Step(366 * 24 * time.Hour)
	if ok, _ := KubeconfigUsable(e.kubeconfig, e.clock.Now()); ok {
		t.Error("an expired client certificate is usable")
	}
	if done, err := Bootstrap(t.Context(), e.opts()); !done || err != nil || len(e.s.requests()) != 2 {
		t.Errorf("Bootstrap after expiry = %v, %v with %d CSRs; want a new one", done, err, len(e.s.requests()))
	}
}

// TestBootstrapResumesTheSameRequest: killed while it waits for approval,
// the bootstrap resumes with the same key, so the same CSR.
func TestBootstrapResumesTheSameRequest(t *testing.T) {
	e := newBootstrapEnv(t)
	e.s.setApprove(false)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := Bootstrap(ctx, e.opts())
		errc <- err
	}()
	eventually(t, "the CSR", func() bool { return len(e.s.requests()) == 1 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("Bootstrap returned no error when cancelled")
	}
	if _, err := os.Stat(filepath.Join(e.certDir, tmpKeyFile)); err != nil {
		t.Fatalf("the bootstrap key is gone: %v", err)
	}
	name := e.s.requests()[0].Name
	e.s.issueStored(name)
	if done, err := Bootstrap(t.Context(), e.opts()); !done || err != nil {
		t.Fatalf("resumed Bootstrap = %v, %v", done, err)
	}
	for _, r := range e.s.requests() {
		if r.Name != name {
			t.Errorf("CSR %s; want the first one, %s, asked again", r.Name, name)
		}
	}
}

// TestBootstrapRetriesWhileTheAPIServerIsAway: failed CSR creations are
// retried after a back-off on the injected clock.
func TestBootstrapRetriesWhileTheAPIServerIsAway(t *testing.T) {
	e := newBootstrapEnv(t)
	e.s.setFailCreate(true)
	errc := make(chan error, 1)
	go func() {
		_, err := Bootstrap(t.Context(), e.opts())
		errc <- err
	}()
	eventually(t, "the first attempt and its back-off", func() bool { return len(e.s.requests()) == 1 && e.clock.HasWaiters() })
	e.s.setFailCreate(false)
	e.clock.Step(30 * time.Second)
	if err := <-errc; err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	if n := len(e.s.requests()); n != 2 {
		t.Errorf("%d attempts; want 2", n)
	}
}
