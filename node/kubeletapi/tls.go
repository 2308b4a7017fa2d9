package kubeletapi

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	certutil "k8s.io/client-go/util/cert"
)

// tlsConfig builds the serving TLS configuration: the certificate from
// the files, or a self-signed one for the node made in memory; client
// certificates are requested (never required, so token clients can
// connect) and offered the client CAs as acceptable issuers. Verification
// happens per request, in x509Authenticator.
func tlsConfig(o *Options) (*tls.Config, *x509.CertPool, error) {
	var cert tls.Certificate
	var err error
	if o.TLSCertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: loading serving certificate %s and key %s: %w",
				ErrInvalidOptions, o.TLSCertFile, o.TLSKeyFile, err)
		}
	} else {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(o.NodeName, o.NodeIPs, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("generating a self-signed serving certificate for %s: %w", o.NodeName, err)
		}
		cert, err = tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("loading the self-signed serving certificate for %s: %w", o.NodeName, err)
		}
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.NoClientCert,
	}
	var roots *x509.CertPool
	if o.ClientCAFile != "" {
		roots, err = certutil.NewPool(o.ClientCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: loading client CA file %s: %w", ErrInvalidOptions, o.ClientCAFile, err)
		}
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = roots
	}
	return cfg, roots, nil
}
