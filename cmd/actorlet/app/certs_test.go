package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

// TestKubeadmControlPlaneKubeconfig: kubeadm init's kubelet.conf carries
// the node's certificate inline; with rotateCertificates it is stored in
// --cert-dir, the client reads it from there, and it is due for renewal at
// once, as the kubelet does it.
func TestKubeadmControlPlaneKubeconfig(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := nodeCert(t, "system:node:cp-1")
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	if err := clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"k": {Server: "https://10.88.104.1:6443", CertificateAuthorityData: certPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"n": {ClientCertificateData: certPEM, ClientKeyData: keyPEM}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "k", AuthInfo: "n"}},
		CurrentContext: "c",
	}, kubeconfig); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nrotateCertificates: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "pki")
	nc, err := resolveArgs(t, kubeletconfig.RunProfile, "--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", filepath.Join(dir, "absent.conf"),
		"--config", config, "--cert-dir", certDir, "--hostname-override", "cp-1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, rot, err := nc.clusterConfig(t.Context(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(certDir, "kubelet-client-current.pem")
	if cfg.CertFile != current || cfg.KeyFile != current || len(cfg.CertData) != 0 || cfg.Host != "https://10.88.104.1:6443" {
		t.Errorf("client config cert %q key %q data %d host %s; want the stored certificate", cfg.CertFile, cfg.KeyFile, len(cfg.CertData), cfg.Host)
	}
	if rot == nil || rot.Current() == nil || rot.Current().Leaf.Subject.CommonName != "system:node:cp-1" {
		t.Fatalf("rotator %v: want one holding the kubeconfig's certificate", rot)
	}
	if d := time.Until(rot.Deadline()); d > 0 {
		t.Errorf("renewal due in %s; want at once", d)
	}
	// Restarted with the same files: the stored certificate is used and
	// not replaced again before its time.
	_, rot2, err := nc.clusterConfig(t.Context(), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(rot2.Deadline()) <= 0 {
		t.Error("after a restart the stored certificate is renewed again at once")
	}
}

// nodeCert is a self-signed client certificate for cn in system:nodes,
// valid for a year.
func nodeCert(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
}
