package certs

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestClientCertificateMetrics: the TTL is +Inf before the first
// certificate, then the seconds to its expiry on the rotator's clock; each
// failed renewal counts one error.
func TestClientCertificateMetrics(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	reg := prometheus.NewPedanticRegistry()
	if err := e.r.RegisterMetrics(reg, ClientCertificate); err != nil {
		t.Fatal(err)
	}
	ttl := func() float64 { return gaugeValue(t, reg, "kubelet_certificate_manager_client_ttl_seconds") }
	if v := ttl(); !math.IsInf(v, 1) {
		t.Fatalf("TTL without a certificate: %v, want +Inf", v)
	}
	e.run()
	e.waitIdle(1)
	if v, want := ttl(), lifetime.Seconds(); v < want-60 || v > want {
		t.Fatalf("TTL of a new certificate: %v, want about %v", v, want)
	}
	e.clock.Step(time.Hour)
	if v, want := ttl(), (lifetime - time.Hour).Seconds(); v < want-60 || v > want {
		t.Fatalf("TTL an hour later: %v, want about %v", v, want)
	}
	e.s.setFailCreate(true)
	e.clock.Step(80 * time.Hour) // past the deadline at 80 %
	e.waitIdle(2)
	e.clock.Step(2 * time.Second)
	e.waitIdle(3)
	const want = `
# HELP kubelet_certificate_manager_client_expiration_renew_errors Counter of certificate renewal errors.
# TYPE kubelet_certificate_manager_client_expiration_renew_errors counter
kubelet_certificate_manager_client_expiration_renew_errors 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubelet_certificate_manager_client_expiration_renew_errors"); err != nil {
		t.Error(err)
	}
}

// TestServingCertificateMetrics: a rotation observes how long the previous
// certificate lived.
func TestServingCertificateMetrics(t *testing.T) {
	e := newRotatorEnv(t, ClientRequest("node-1"), false)
	reg := prometheus.NewPedanticRegistry()
	if err := e.r.RegisterMetrics(reg, ServingCertificate); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(2 * time.Hour)
	if err := e.r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
		if mf.GetName() == "kubelet_certificate_manager_server_rotation_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 1 || h.GetSampleSum() < 7200 || h.GetSampleSum() > 7200+120 {
				t.Errorf("rotation age: %d samples, sum %v; want one of about 7200 s", h.GetSampleCount(), h.GetSampleSum())
			}
		}
	}
	for _, name := range []string{"kubelet_certificate_manager_server_rotation_seconds", "kubelet_certificate_manager_server_ttl_seconds", "kubelet_server_expiration_renew_errors"} {
		if !got[name] {
			t.Errorf("%s not gathered", name)
		}
	}
	if err := e.r.RegisterMetrics(prometheus.NewRegistry(), Kind(7)); err == nil {
		t.Error("an unknown kind registered")
	}
}

func gaugeValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not gathered", name)
	return 0
}
