package app

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The heartbeat client, as the kubelet's: no rate limit, each request
// bounded by the shorter of the status update frequency and the lease
// duration; the node's own client keeps its limits.
func TestHeartbeatConfig(t *testing.T) {
	for _, tc := range []struct {
		update time.Duration
		lease  int32
		want   time.Duration
	}{
		{10 * time.Second, 40, 10 * time.Second},
		{time.Minute, 40, 40 * time.Second},
	} {
		kc := &kubeletconfigv1beta1.KubeletConfiguration{NodeStatusUpdateFrequency: metav1.Duration{Duration: tc.update}, NodeLeaseDurationSeconds: tc.lease}
		base := &rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10}
		hc := heartbeatConfig(base, kc)
		if hc.QPS >= 0 || hc.RateLimiter != nil {
			t.Errorf("update %s, lease %ds: QPS %v, rate limiter %v; want no limit (QPS < 0)", tc.update, tc.lease, hc.QPS, hc.RateLimiter)
		}
		if hc.Timeout != tc.want {
			t.Errorf("update %s, lease %ds: timeout %s, want %s", tc.update, tc.lease, hc.Timeout, tc.want)
		}
		if base.QPS != 5 || base.Burst != 10 || base.Timeout != 0 {
			t.Errorf("the node's own configuration changed: %+v", base)
		}
		cs, err := kubernetes.NewForConfig(hc)
		if err != nil {
			t.Fatal(err)
		}
		if cs.CoordinationV1().RESTClient().GetRateLimiter() != nil {
			t.Errorf("update %s, lease %ds: the heartbeat REST client has a rate limiter", tc.update, tc.lease)
		}
	}
}
