package kubeletapi

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"time"
)

// x509Authenticator authenticates a request by the client certificate of
// its TLS connection, verified against the client CA pool for client
// authentication: the user is the certificate's common name, the groups
// its organizations. A request without a certificate is not its business
// (ok false, no error); a certificate that does not verify is an error, and
// the next authenticator may still accept the request.
type x509Authenticator struct {
	roots *x509.CertPool
	now   func() time.Time
}

func (a *x509Authenticator) authenticate(r *http.Request) (*userInfo, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:         a.roots,
		Intermediates: x509.NewCertPool(),
		CurrentTime:   a.now(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range r.TLS.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, false, fmt.Errorf("verifying client certificate %q: %w", leaf.Subject.CommonName, err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, fmt.Errorf("client certificate (serial %s) has no common name", leaf.SerialNumber)
	}
	return &userInfo{
		Name:   leaf.Subject.CommonName,
		Groups: append([]string(nil), leaf.Subject.Organization...),
	}, true, nil
}
