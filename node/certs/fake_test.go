package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/keyutil"
)

// signer is a fake API server's certificates API: every CSR created is
// recorded and, while approve is set, approved and issued at once by a test
// CA for lifetime from now().
type signer struct {
	t        *testing.T
	client   *fake.Clientset
	caCert   *x509.Certificate
	caKey    *ecdsa.PrivateKey
	now      func() time.Time
	lifetime time.Duration

	mu         sync.Mutex
	approve    bool
	failCreate bool
	csrs       []certificatesv1.CertificateSigningRequest
	serial     int64
}

func newSigner(t *testing.T, now func() time.Time, lifetime time.Duration) *signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: now().Add(-24 * time.Hour), NotAfter: now().Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	s := &signer{t: t, client: fake.NewClientset(), caCert: ca, caKey: key, now: now, lifetime: lifetime, approve: true, serial: 1}
	s.client.PrependReactor("create", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		csr := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		if csr.Name == "" {
			csr.Name = csr.GenerateName + time.Now().Format("150405.000000000")
		}
		s.csrs = append(s.csrs, *csr.DeepCopy())
		if s.failCreate {
			return true, nil, errors.New("the API server is away")
		}
		if s.approve {
			s.issue(csr)
		}
		return false, nil, nil // the tracker stores the (issued) CSR
	})
	// The fake clientset ignores field selectors; the CSR helpers select
	// their CSR by metadata.name.
	byName := func(sel fields.Selector, o runtime.Object) bool {
		csr, ok := o.(*certificatesv1.CertificateSigningRequest)
		return !ok || sel.Matches(fields.Set{"metadata.name": csr.Name})
	}
	s.client.PrependReactor("list", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := s.client.Tracker().List(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
			certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "")
		if err != nil {
			return true, nil, err
		}
		list := obj.(*certificatesv1.CertificateSigningRequestList)
		sel := a.(clienttesting.ListAction).GetListRestrictions().Fields
		list.Items = slices.DeleteFunc(list.Items, func(c certificatesv1.CertificateSigningRequest) bool { return !byName(sel, &c) })
		return true, list, nil
	})
	s.client.PrependWatchReactor("certificatesigningrequests", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w, err := s.client.Tracker().Watch(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "")
		if err != nil {
			return true, nil, err
		}
		sel := a.(clienttesting.WatchAction).GetWatchRestrictions().Fields
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) { return e, byName(sel, e.Object) }), nil
	})
	return s
}

// issue approves csr and signs its request (the lock is held).
func (s *signer) issue(csr *certificatesv1.CertificateSigningRequest) {
	block, _ := pem.Decode(csr.Spec.Request)
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		s.t.Errorf("CSR %s: %v", csr.Name, err)
		return
	}
	s.serial++
	usage := x509.ExtKeyUsageClientAuth
	if csr.Spec.SignerName == certificatesv1.KubeletServingSignerName {
		usage = x509.ExtKeyUsageServerAuth
	}
	now := s.now()
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(s.serial), Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: now, NotAfter: now.Add(s.lifetime), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}, s.caCert, req.PublicKey, s.caKey)
	if err != nil {
		s.t.Errorf("signing CSR %s: %v", csr.Name, err)
		return
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", LastUpdateTime: metav1.Now(),
	})
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func (s *signer) requests() []certificatesv1.CertificateSigningRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]certificatesv1.CertificateSigningRequest(nil), s.csrs...)
}

func (s *signer) setApprove(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approve = on
}

// eventually polls cond until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func (s *signer) setFailCreate(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCreate = on
}

// issueStored approves and issues the stored CSR name.
func (s *signer) issueStored(name string) {
	s.t.Helper()
	ctx := s.t.Context()
	csr, err := s.client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.issue(csr)
	s.mu.Unlock()
	if _, err := s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

func encode64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func pemCert(c *tls.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]})
}

func pemKey(t *testing.T, c *tls.Certificate) []byte {
	t.Helper()
	b, err := keyutil.MarshalPrivateKeyToPEM(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
