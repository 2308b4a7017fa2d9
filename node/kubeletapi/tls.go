package kubeletapi

import (
	"crypto/tls"
	"errors"
	"fmt"

	certutil "k8s.io/client-go/util/cert"
	cliflag "k8s.io/component-base/cli/flag"
)

// tlsConfig builds the serving TLS configuration: the certificate from
// Options.ServingCertificate, or the files, or a self-signed one for the
// node made in memory; the kubelet's tlsMinVersion (TLS 1.2 by default) and
// tlsCipherSuites; client certificates are requested (never required, so
// token clients can connect) and offered the client CAs as acceptable
// issuers. Verification happens per request, in the authenticator.
func tlsConfig(o *Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.NoClientCert}
	if o.TLSMinVersion != "" {
		v, err := cliflag.TLSVersion(o.TLSMinVersion)
		if err != nil {
			return nil, fmt.Errorf("%w: tlsMinVersion: %w", ErrInvalidOptions, err)
		}
		cfg.MinVersion = v
	}
	if len(o.TLSCipherSuites) > 0 {
		suites, err := cliflag.TLSCipherSuites(o.TLSCipherSuites)
		if err != nil {
			return nil, fmt.Errorf("%w: tlsCipherSuites: %w", ErrInvalidOptions, err)
		}
		cfg.CipherSuites = suites
	}
	switch {
	case o.ServingCertificate != nil:
		get := o.ServingCertificate
		cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := get(); c != nil {
				return c, nil
			}
			return nil, errors.New("no serving certificate available for the kubelet")
		}
	case o.TLSCertFile != "":
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: loading serving certificate %s and key %s: %w",
				ErrInvalidOptions, o.TLSCertFile, o.TLSKeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	default:
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(o.NodeName, o.NodeIPs, nil)
		if err != nil {
			return nil, fmt.Errorf("generating a self-signed serving certificate for %s: %w", o.NodeName, err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("loading the self-signed serving certificate for %s: %w", o.NodeName, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if o.ClientCAFile != "" {
		roots, err := certutil.NewPool(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: loading client CA file %s: %w", ErrInvalidOptions, o.ClientCAFile, err)
		}
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = roots
	}
	return cfg, nil
}
