package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"net"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// WaitTimeout bounds the wait for one CSR to be approved and issued (the
// kubelet waits an hour for its bootstrap certificate).
const WaitTimeout = time.Hour

// Request is what a certificate is asked for: the CSR's template, its signer
// and the usages for a key.
type Request struct {
	// Template returns the subject and names to ask for; nil means there is
	// nothing to ask for yet (a serving certificate without an address).
	Template func() *x509.CertificateRequest
	Signer   string
	Usages   func(privateKey any) []certificatesv1.KeyUsage
}

// ClientRequest is the node's client certificate: CN system:node:<name> in
// O system:nodes, signed by kubernetes.io/kube-apiserver-client-kubelet.
func ClientRequest(nodeName string) Request {
	return Request{
		Template: func() *x509.CertificateRequest {
			return &x509.CertificateRequest{Subject: nodeSubject(nodeName)}
		},
		Signer: certificatesv1.KubeAPIServerClientKubeletSignerName,
		Usages: certificate.DefaultKubeletClientGetUsages,
	}
}

// ServingRequest is the node's serving certificate for the kubelet API: CN
// system:node:<name> in O system:nodes with the node's host names and IPs,
// signed by kubernetes.io/kubelet-serving. Without an IP there is nothing to
// ask for, as for the kubelet.
func ServingRequest(nodeName string, dnsNames []string, ips []net.IP) Request {
	return Request{
		Template: func() *x509.CertificateRequest {
			if len(ips) == 0 {
				return nil
			}
			return &x509.CertificateRequest{Subject: nodeSubject(nodeName), DNSNames: dnsNames, IPAddresses: ips}
		},
		Signer: certificatesv1.KubeletServingSignerName,
		Usages: certificate.DefaultKubeletServingGetUsages,
	}
}

func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// newKey makes a key as client-go's certificate manager does: ECDSA P-256.
func newKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key: %w", err)
	}
	pemKey, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key: %w", err)
	}
	return key, pemKey, nil
}

// requestAndWait sends a CSR for key and waits, at most WaitTimeout, for its
// certificate. name, if set, names the CSR, so that asking again after a
// restart finds the one already sent.
func requestAndWait(ctx context.Context, client kubernetes.Interface, r Request, tmpl *x509.CertificateRequest, name string, key crypto.Signer) ([]byte, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, fmt.Errorf("making the certificate request for %s: %w", tmpl.Subject.CommonName, err)
	}
	csrPEM := pemEncode("CERTIFICATE REQUEST", der)
	reqName, uid, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name, r.Signer, nil, r.Usages(key), key)
	if err != nil {
		return nil, fmt.Errorf("certificate signing request for %s (signer %s): %w", tmpl.Subject.CommonName, r.Signer, err)
	}
	wctx, cancel := context.WithTimeout(ctx, WaitTimeout)
	defer cancel()
	cert, err := csr.WaitForCertificate(wctx, client, reqName, uid)
	if err != nil {
		return nil, fmt.Errorf("certificate signing request %s for %s was not issued: %w", reqName, tmpl.Subject.CommonName, err)
	}
	return cert, nil
}

// csrName is the kubelet's name of a bootstrap CSR: a digest of the public
// key, the subject and the usages, so that a restarted bootstrap reuses the
// CSR it sent.
func csrName(pub any, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	h := sha512.New512_256()
	write := func(b []byte) {
		h.Write([]byte(base64.RawURLEncoding.EncodeToString(b)))
		h.Write([]byte{'|'})
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		write([]byte(o))
	}
	for _, u := range usages {
		write([]byte(u))
	}
	return "node-csr-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}
