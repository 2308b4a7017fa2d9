package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/certs"
)

// certDir is --cert-dir; under actorlet run, unless given, <root-dir>/pki.
func (nc *nodeConfig) certDir() string {
	return nc.node.CertDirectory
}

// clusterConfig is the node's API client configuration, as the kubelet
// builds it: with --bootstrap-kubeconfig, the TLS bootstrap first (see
// certs.Bootstrap); with rotateCertificates, the client certificate is kept
// in --cert-dir (seeded from the kubeconfig's own certificate data, which is
// then renewed at once, as the kubelet does on a kubeadm control plane) and
// the returned rotator renews it; the client reads the current file, and
// client-go picks up a renewed one. nil, nil: standalone (no --kubeconfig).
func (nc *nodeConfig) clusterConfig(ctx context.Context, log *zap.Logger) (*rest.Config, *certs.Rotator, error) {
	f := nc.node
	if f.KubeConfig == "" {
		return nil, nil, nil
	}
	if f.BootstrapKubeconfig != "" {
		if _, err := certs.Bootstrap(ctx, certs.BootstrapOptions{
			Kubeconfig: f.KubeConfig, BootstrapKubeconfig: f.BootstrapKubeconfig, CertDir: nc.certDir(), NodeName: nc.nodeName,
			Logger: log.Named("tls-bootstrap"),
		}); err != nil {
			return nil, nil, err
		}
	}
	cfg, err := certs.LoadKubeconfig(f.KubeConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--kubeconfig %s: %w", f.KubeConfig, err)
	}
	apiLimits(cfg, nc.kc)
	if !nc.kc.RotateCertificates {
		return cfg, nil, nil
	}
	if err := os.MkdirAll(nc.certDir(), 0o700); err != nil {
		return nil, nil, fmt.Errorf("--cert-dir: %w", err)
	}
	store, err := certificate.NewFileStore(certs.ClientPrefix, nc.certDir(), nc.certDir(), cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("client certificate store in %s: %w", nc.certDir(), err)
	}
	rotateNow := false
	if cur, err := store.Current(); (err != nil || cur.Leaf == nil || !cur.Leaf.NotAfter.After(time.Now())) && len(cfg.CertData) > 0 && len(cfg.KeyData) > 0 {
		if _, err := store.Update(cfg.CertData, cfg.KeyData); err != nil {
			return nil, nil, fmt.Errorf("storing the kubeconfig's client certificate in %s: %w", nc.certDir(), err)
		}
		rotateNow = true
		log.Info("client certificate rotation: the kubeconfig's certificate is stored and will be renewed now", zap.String("cert", store.CurrentPath()))
	}
	client := rest.CopyConfig(cfg)
	if _, err := os.Stat(store.CurrentPath()); err == nil {
		client = rest.AnonymousClientConfig(cfg)
		client.CertFile, client.KeyFile = store.CurrentPath(), store.CurrentPath()
		apiLimits(client, nc.kc)
	}
	rot, err := certs.NewRotator(certs.RotatorOptions{
		Store: store, Request: certs.ClientRequest(nc.nodeName), RotateNow: rotateNow, Logger: log.Named("client-cert"),
		Client: func(current *tls.Certificate) (kubernetes.Interface, error) {
			// With a certificate, the node renews its own; without one, the
			// bootstrap identity asks (when there is one).
			if current == nil && f.BootstrapKubeconfig != "" {
				bootCfg, err := certs.LoadKubeconfig(f.BootstrapKubeconfig)
				if err != nil {
					return nil, fmt.Errorf("--bootstrap-kubeconfig %s: %w", f.BootstrapKubeconfig, err)
				}
				return kubernetes.NewForConfig(bootCfg)
			}
			return kubernetes.NewForConfig(client)
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return client, rot, nil
}

// servingCertificate is the kubelet API's certificate, as the kubelet
// chooses it: with serverTLSBootstrap, a rotator asking the API server
// (signer kubernetes.io/kubelet-serving) for the node's names and IPs;
// otherwise --tls-cert-file and --tls-private-key-file; otherwise a
// self-signed pair kept in --cert-dir (kubelet.crt, kubelet.key), made once.
func (nc *nodeConfig) servingCertificate(kube kubernetes.Interface, log *zap.Logger) (certFile, keyFile string, rot *certs.Rotator, err error) {
	kc := nc.kc
	if kc.ServerTLSBootstrap {
		store, err := certificate.NewFileStore(certs.ServingPrefix, nc.certDir(), nc.certDir(), kc.TLSCertFile, kc.TLSPrivateKeyFile)
		if err != nil {
			return "", "", nil, fmt.Errorf("serving certificate store in %s: %w", nc.certDir(), err)
		}
		rot, err := certs.NewRotator(certs.RotatorOptions{
			Store: store, Request: certs.ServingRequest(nc.nodeName, []string{nc.nodeName}, nc.nodeIPs), Logger: log.Named("serving-cert"),
			Client: func(*tls.Certificate) (kubernetes.Interface, error) { return kube, nil },
		})
		return "", "", rot, err
	}
	if kc.TLSCertFile != "" || kc.TLSPrivateKeyFile != "" {
		return kc.TLSCertFile, kc.TLSPrivateKeyFile, nil, nil
	}
	certFile, keyFile = filepath.Join(nc.certDir(), "kubelet.crt"), filepath.Join(nc.certDir(), "kubelet.key")
	if ok, err := certutil.CanReadCertAndKey(certFile, keyFile); err != nil || ok {
		return certFile, keyFile, nil, err
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(nc.nodeName, nc.nodeIPs, nil)
	if err != nil {
		return "", "", nil, fmt.Errorf("self-signed serving certificate for %s: %w", nc.nodeName, err)
	}
	if err := os.MkdirAll(nc.certDir(), 0o700); err != nil {
		return "", "", nil, fmt.Errorf("--cert-dir: %w", err)
	}
	if err := certutil.WriteCert(certFile, certPEM); err != nil {
		return "", "", nil, err
	}
	if err := keyutil.WriteKey(keyFile, keyPEM); err != nil {
		return "", "", nil, err
	}
	log.Info("wrote a self-signed serving certificate", zap.String("cert", certFile))
	return certFile, keyFile, nil, nil
}

// cgroupDriver is the cgroup driver pods get, as the kubelet decides it: the
// runtime's answer to RuntimeConfig when it gives one, else cgroupDriver.
// actorlet makes QoS cgroups with the cgroupfs driver only; the simulated
// runtime (simulated is its name), whose containers have no cgroups, is let
// through whatever it answers.
func (nc *nodeConfig) cgroupDriver(ctx context.Context, client *cri.Client, simulated bool, log *zap.Logger) (string, error) {
	driver := nc.kc.CgroupDriver
	d, err := runtimeCgroupDriver(ctx, client)
	switch {
	case err == nil && d == runtimeapi.CgroupDriver_SYSTEMD:
		driver = "systemd"
	case err == nil:
		driver = "cgroupfs"
	case cri.KindOf(err) == cri.Unimplemented:
		log.Info("the runtime does not tell its cgroup driver (RuntimeConfig): using cgroupDriver", zap.String("cgroupDriver", driver))
	default:
		return "", fmt.Errorf("asking the runtime for its cgroup driver: %w", err)
	}
	if driver == "systemd" && *nc.kc.CgroupsPerQOS && !simulated {
		return "", fmt.Errorf("cgroup driver systemd (the runtime's, or cgroupDriver): actorlet makes QoS and pod cgroups with the cgroupfs driver only; set cgroupsPerQOS: false or configure the runtime for cgroupfs")
	}
	return driver, nil
}

// runtimeCgroupDriver asks the runtime for its cgroup driver (RuntimeConfig).
// As the kubelet, it tries again on an error that may be transient
// (unavailable, timed out: up to cgroupDriverAttempts calls, a second
// apart), so one lost reply does not fail the node's start.
func runtimeCgroupDriver(ctx context.Context, client *cri.Client) (runtimeapi.CgroupDriver, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for attempt := 1; ; attempt++ {
		d, err := client.CgroupDriver(ctx)
		if err == nil || !cri.Retryable(err) || attempt == cgroupDriverAttempts {
			return d, err
		}
		select {
		case <-ctx.Done():
			return d, err
		case <-tick.C:
		}
	}
}

// cgroupDriverAttempts bounds runtimeCgroupDriver's calls.
const cgroupDriverAttempts = 5
