package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// RotatorOptions are the inputs of NewRotator.
type RotatorOptions struct {
	// Store holds the certificate: its current one is the starting point,
	// renewed ones are written to it.
	Store   certificate.Store
	Request Request
	// Client returns the client that sends the CSRs, given the current
	// certificate (nil when there is none yet).
	Client func(current *tls.Certificate) (kubernetes.Interface, error)
	// RotateNow renews at once, whatever the current certificate's age (the
	// kubelet does so with the certificate of a kubeadm control plane's
	// kubeconfig, to replace it with one of its own).
	RotateNow bool
	// Clock times the rotation; nil means the real clock. Jitter returns a
	// number in [0, 1) for the deadline's jitter; nil means random.
	Clock  clock.WithTicker
	Jitter func() float64
	Logger *zap.Logger
	// OnRotate, if set, is called after each new certificate is stored.
	OnRotate func(*tls.Certificate)
}

// Rotator keeps the certificate of its store current (see the package
// documentation). Current is safe for concurrent use.
type Rotator struct {
	o       RotatorOptions
	backoff *flowcontrol.Backoff

	mu      sync.Mutex
	current *tls.Certificate
	force   bool
	metrics metrics // see RegisterMetrics
}

// Errors of a Rotator.
var (
	// ErrNothingToRequest: the template is empty (a serving certificate
	// without an address yet).
	ErrNothingToRequest = errors.New("nothing to request yet")
)

// Back-off between failed rotations, as client-go's manager: from 2 s,
// doubling, to 32 s... and at most 5 minutes.
const (
	backoffInitial = 2 * time.Second
	backoffMax     = 5 * time.Minute
)

// NewRotator reads the store's current certificate; an empty store is no
// error (the first rotation is then due at once).
func NewRotator(o RotatorOptions) (*Rotator, error) {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	r := &Rotator{o: o, backoff: flowcontrol.NewFakeBackOff(backoffInitial, backoffMax, o.Clock), force: o.RotateNow}
	cur, err := o.Store.Current()
	var none *certificate.NoCertKeyError
	switch {
	case errors.As(err, &none):
	case err != nil:
		return nil, fmt.Errorf("current certificate: %w", err)
	default:
		r.current = cur
	}
	return r, nil
}

// Current is the certificate in use: nil before the first one, or once it
// has expired.
func (r *Rotator) Current() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == nil || r.current.Leaf == nil || r.o.Clock.Now().After(r.current.Leaf.NotAfter) {
		return nil
	}
	return r.current
}

// Deadline is when the current certificate is to be renewed: its NotBefore
// plus 70–90 % of its lifetime (the kubelet's jitter), or now when there is
// none, it does not fit the template, or a rotation is forced.
func (r *Rotator) Deadline() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.o.Clock.Now()
	if r.force || r.current == nil || r.current.Leaf == nil || !fits(r.current.Leaf, r.o.Request.Template()) {
		return now
	}
	leaf := r.current.Leaf
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	return leaf.NotBefore.Add(time.Duration(float64(life) * (0.7 + 0.2*r.o.Jitter())))
}

// fits tells whether cert has the subject, names and addresses the template
// asks for (more is fine).
func fits(cert *x509.Certificate, tmpl *x509.CertificateRequest) bool {
	if tmpl == nil {
		return true
	}
	if cert.Subject.CommonName != tmpl.Subject.CommonName {
		return false
	}
	for _, o := range tmpl.Subject.Organization {
		if !slices.Contains(cert.Subject.Organization, o) {
			return false
		}
	}
	for _, d := range tmpl.DNSNames {
		if !slices.Contains(cert.DNSNames, d) {
			return false
		}
	}
	for _, ip := range tmpl.IPAddresses {
		if !slices.ContainsFunc(cert.IPAddresses, func(c net.IP) bool { return c.Equal(ip) }) {
			return false
		}
	}
	return true
}

// Rotate requests a new certificate now, waits for it and stores it.
func (r *Rotator) Rotate(ctx context.Context) error {
	tmpl := r.o.Request.Template()
	if tmpl == nil {
		return ErrNothingToRequest
	}
	r.mu.Lock()
	cur := r.current
	r.mu.Unlock()
	client, err := r.o.Client(cur)
	if err != nil {
		return fmt.Errorf("CSR client: %w", err)
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return err
	}
	certPEM, err := requestAndWait(ctx, client, r.o.Request, tmpl, "", key)
	if err != nil {
		return err
	}
	cert, err := r.o.Store.Update(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("storing the certificate of %s: %w", tmpl.Subject.CommonName, err)
	}
	r.mu.Lock()
	prev, age := r.current, r.metrics.rotationAge
	r.current, r.force = cert, false
	r.mu.Unlock()
	if prev != nil && prev.Leaf != nil && age != nil {
		age.Observe(r.o.Clock.Now().Sub(prev.Leaf.NotBefore).Seconds())
	}
	r.o.Logger.Info("certificate rotated", zap.String("signer", r.o.Request.Signer), zap.String("subject", cert.Leaf.Subject.CommonName),
		zap.Time("notAfter", cert.Leaf.NotAfter))
	if r.o.OnRotate != nil {
		r.o.OnRotate(cert)
	}
	return nil
}

// Run renews the certificate at each deadline until ctx ends; a failed
// rotation is retried with back-off.
func (r *Rotator) Run(ctx context.Context) {
	const key = "rotation"
	for ctx.Err() == nil {
		wait := r.Deadline().Sub(r.o.Clock.Now())
		if wait > 0 && !r.sleep(ctx, wait) {
			return
		}
		err := r.Rotate(ctx)
		if err == nil {
			r.backoff.Reset(key)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		renewErrors := r.metrics.renewErrors
		r.mu.Unlock()
		if renewErrors != nil {
			renewErrors.Inc()
		}
		r.backoff.Next(key, r.o.Clock.Now())
		delay := r.backoff.Get(key)
		r.o.Logger.Warn("certificate rotation failed, retrying", zap.String("signer", r.o.Request.Signer), zap.Duration("in", delay), zap.Error(err))
		if !r.sleep(ctx, delay) {
			return
		}
	}
}

// sleep waits d on the clock; false when ctx ended first.
func (r *Rotator) sleep(ctx context.Context, d time.Duration) bool {
	t := r.o.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
