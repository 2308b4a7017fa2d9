package certs

import (
	"context"
	"crypto"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/clock"
)

// ClientPrefix is the FileStore prefix of the node's client certificate
// (<cert-dir>/kubelet-client-current.pem), ServingPrefix of its serving one.
const (
	ClientPrefix  = "kubelet-client"
	ServingPrefix = "kubelet-server"
	// tmpKeyFile holds the bootstrap key until its certificate is stored,
	// so that a restart asks for the same key (and finds the same CSR).
	tmpKeyFile = "kubelet-client.key.tmp"
)

// BootstrapOptions are the inputs of Bootstrap.
type BootstrapOptions struct {
	// Kubeconfig is --kubeconfig, written when bootstrapping;
	// BootstrapKubeconfig is --bootstrap-kubeconfig; CertDir is --cert-dir.
	Kubeconfig, BootstrapKubeconfig, CertDir string
	NodeName                                 string
	// NewClient makes the client of the bootstrap identity; nil means
	// kubernetes.NewForConfig.
	NewClient func(*rest.Config) (kubernetes.Interface, error)
	// Clock tells whether certificates have expired and times the retries;
	// nil means the real clock.
	Clock  clock.WithTicker
	Logger *zap.Logger
}

// Bootstrap is the kubelet's TLS bootstrap. When Kubeconfig exists and its
// client certificate has not expired, it does nothing (bootstrapped false).
// Otherwise it asks the API server, as the identity of BootstrapKubeconfig,
// for a client certificate for system:node:<NodeName> (CSR named after the
// key and subject, signer kubernetes.io/kube-apiserver-client-kubelet),
// waits until it is approved and issued, stores it with its key in CertDir
// (kubelet-client-<date>.pem and the symlink kubelet-client-current.pem,
// files 0600), and writes Kubeconfig with the bootstrap kubeconfig's server
// and CA and that certificate. The key is kept in CertDir until then, so an
// interrupted bootstrap resumes with the same key and CSR. Failures to reach
// the API server are retried with back-off until ctx ends.
func Bootstrap(ctx context.Context, o BootstrapOptions) (bootstrapped bool, err error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.NewClient == nil {
		o.NewClient = func(c *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(c) }
	}
	if ok, why := KubeconfigUsable(o.Kubeconfig, o.Clock.Now()); ok {
		return false, nil
	} else {
		o.Logger.Info("TLS bootstrap: the kubeconfig is not usable, requesting a client certificate",
			zap.String("kubeconfig", o.Kubeconfig), zap.String("reason", why), zap.String("bootstrapKubeconfig", o.BootstrapKubeconfig))
	}
	bootCfg, err := LoadKubeconfig(o.BootstrapKubeconfig)
	if err != nil {
		return false, fmt.Errorf("bootstrap kubeconfig %s: %w", o.BootstrapKubeconfig, err)
	}
	client, err := o.NewClient(bootCfg)
	if err != nil {
		return false, fmt.Errorf("bootstrap client from %s: %w", o.BootstrapKubeconfig, err)
	}
	if err := os.MkdirAll(o.CertDir, 0o700); err != nil {
		return false, fmt.Errorf("cert dir: %w", err)
	}
	store, err := certificate.NewFileStore(ClientPrefix, o.CertDir, o.CertDir, "", "")
	if err != nil {
		return false, fmt.Errorf("client certificate store in %s: %w", o.CertDir, err)
	}
	keyPath := filepath.Join(o.CertDir, tmpKeyFile)
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return false, fmt.Errorf("bootstrap key %s: %w", keyPath, err)
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return false, fmt.Errorf("bootstrap key %s: %w", keyPath, err)
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return false, fmt.Errorf("bootstrap key %s is not a signing key", keyPath)
	}
	r := ClientRequest(o.NodeName)
	tmpl := r.Template()
	name, err := csrName(key.Public(), tmpl.Subject, r.Usages(key))
	if err != nil {
		return false, err
	}
	var certPEM []byte
	backoff := flowcontrol.NewBackOffWithJitter(time.Second, 30*time.Second, 0.1)
	backoff.Clock = o.Clock
	for {
		certPEM, err = requestAndWait(ctx, client, r, tmpl, name, key)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("TLS bootstrap of %s: %w", o.NodeName, errors.Join(err, ctx.Err()))
		}
		backoff.Next(name, o.Clock.Now())
		delay := backoff.Get(name)
		o.Logger.Warn("TLS bootstrap: retrying", zap.Duration("in", delay), zap.Error(err))
		t := o.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, fmt.Errorf("TLS bootstrap of %s: %w", o.NodeName, errors.Join(err, ctx.Err()))
		case <-t.C():
		}
	}
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		return false, fmt.Errorf("storing the client certificate in %s: %w", o.CertDir, err)
	}
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		o.Logger.Warn("removing the bootstrap key", zap.String("path", keyPath), zap.Error(err))
	}
	if err := WriteKubeconfig(o.Kubeconfig, bootCfg, store.CurrentPath()); err != nil {
		return false, err
	}
	o.Logger.Info("TLS bootstrap: client certificate issued", zap.String("cert", store.CurrentPath()), zap.String("kubeconfig", o.Kubeconfig))
	return true, nil
}

// LoadKubeconfig reads a kubeconfig's current context as a client config.
func LoadKubeconfig(path string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := rules.Load()
	if err != nil {
		return nil, err
	}
	return clientcmd.NewNonInteractiveClientConfig(*cfg, cfg.CurrentContext, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
}

// KubeconfigUsable tells whether the kubeconfig at path exists, loads, and
// has a client certificate none of whose certificates has expired at now;
// why says what is wrong when not.
func KubeconfigUsable(path string, now time.Time) (ok bool, why string) {
	if _, err := os.Stat(path); err != nil {
		return false, err.Error()
	}
	cfg, err := LoadKubeconfig(path)
	if err != nil {
		return false, err.Error()
	}
	tc, err := cfg.TransportConfig()
	if err != nil {
		return false, err.Error()
	}
	// Reads the certificate and key files into the config.
	if _, err := transport.TLSConfigFor(tc); err != nil {
		return false, err.Error()
	}
	certs, err := certutil.ParseCertsPEM(tc.TLS.CertData)
	if err != nil {
		return false, "no client certificate: " + err.Error()
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, fmt.Sprintf("the client certificate %q expired at %s", c.Subject.CommonName, c.NotAfter)
		}
	}
	return true, ""
}

// WriteKubeconfig writes a kubeconfig (0600) for the server and CA of from
// with the client certificate and key of pemPath, as the kubelet writes it
// after bootstrapping.
func WriteKubeconfig(path string, from *rest.Config, pemPath string) error {
	cluster := &clientcmdapi.Cluster{
		Server: from.Host, InsecureSkipTLSVerify: from.Insecure, CertificateAuthority: from.CAFile,
	}
	if from.CAFile == "" {
		cluster.CertificateAuthorityData = from.CAData
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

func pemEncode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
