package imagegc

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		want string // substring of the error; "" for valid
	}{
		{"default", DefaultPolicy(), ""},
		{"max age set", Policy{HighThresholdPercent: 100, LowThresholdPercent: 0, MinAge: 0, MaxAge: time.Hour}, ""},
		{"high over 100", Policy{HighThresholdPercent: 101, LowThresholdPercent: 80}, "imageGCHighThresholdPercent: Invalid value: 101: must be between 0 and 100"},
		{"low negative", Policy{HighThresholdPercent: 85, LowThresholdPercent: -1}, "imageGCLowThresholdPercent: Invalid value: -1: must be between 0 and 100"},
		{"low equals high", Policy{HighThresholdPercent: 80, LowThresholdPercent: 80}, "imageGCLowThresholdPercent: Invalid value: 80: must be less than imageGCHighThresholdPercent"},
		{"low above high", Policy{HighThresholdPercent: 50, LowThresholdPercent: 80}, "must be less than imageGCHighThresholdPercent"},
		{"min age negative", Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: -time.Second}, "imageMinimumGCAge: Invalid value: \"-1s\": must not be negative"},
		{"max age negative", Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MaxAge: -time.Second}, "imageMaximumGCAge: Invalid value: \"-1s\": must not be negative"},
		{"max age not above min age", Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Hour, MaxAge: time.Hour}, "must be greater than imageMinimumGCAge (1h0m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			if _, nerr := New(newFakeRuntime(), tc.p); (nerr == nil) != (tc.want == "") {
				t.Errorf("New error = %v, want one iff Validate fails", nerr)
			}
		})
	}
}

func TestPolicyValidateReportsEveryField(t *testing.T) {
	err := Policy{HighThresholdPercent: 120, LowThresholdPercent: -5, MinAge: -1}.Validate()
	for _, f := range []string{"imageGCHighThresholdPercent", "imageGCLowThresholdPercent", "imageMinimumGCAge"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("error %v does not name %s", err, f)
		}
	}
}

func TestPolicyFromConfig(t *testing.T) {
	p, err := PolicyFromConfig(&kubeletconfigv1beta1.KubeletConfiguration{})
	if err != nil || p != DefaultPolicy() {
		t.Fatalf("unset fields: %+v, %v; want the defaults %+v", p, err, DefaultPolicy())
	}
	if p.HighThresholdPercent != 85 || p.LowThresholdPercent != 80 || p.MinAge != 2*time.Minute || p.MaxAge != 0 {
		t.Fatalf("defaults = %+v", p)
	}
	p, err = PolicyFromConfig(&kubeletconfigv1beta1.KubeletConfiguration{
		ImageGCHighThresholdPercent: ptr.To[int32](90),
		ImageGCLowThresholdPercent:  ptr.To[int32](0),
		ImageMinimumGCAge:           metav1.Duration{Duration: time.Minute},
		ImageMaximumGCAge:           metav1.Duration{Duration: 24 * time.Hour},
	})
	want := Policy{HighThresholdPercent: 90, LowThresholdPercent: 0, MinAge: time.Minute, MaxAge: 24 * time.Hour}
	if err != nil || p != want {
		t.Fatalf("PolicyFromConfig = %+v, %v; want %+v", p, err, want)
	}
	_, err = PolicyFromConfig(&kubeletconfigv1beta1.KubeletConfiguration{ImageGCLowThresholdPercent: ptr.To[int32](90)})
	if err == nil || !strings.Contains(err.Error(), "imageGCLowThresholdPercent") {
		t.Fatalf("low 90 over default high 85: err = %v", err)
	}
}
