package logrotate

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestPolicyFromConfigDefaults(t *testing.T) {
	want := Policy{MaxSize: 10 << 20, MaxFiles: 5, MonitorInterval: 10 * time.Second, MaxWorkers: 1}
	for _, c := range []*kubeletconfigv1beta1.KubeletConfiguration{nil, {}} {
		got, err := PolicyFromConfig(c)
		if err != nil {
			t.Fatalf("PolicyFromConfig(%v): %v", c, err)
		}
		if got != want {
			t.Errorf("PolicyFromConfig(%v) = %+v, want %+v", c, got, want)
		}
	}
}

func TestPolicyFromConfigValues(t *testing.T) {
	got, err := PolicyFromConfig(&kubeletconfigv1beta1.KubeletConfiguration{
		ContainerLogMaxSize:         "1Ki",
		ContainerLogMaxFiles:        ptr.To[int32](2),
		ContainerLogMonitorInterval: &metav1.Duration{Duration: 3 * time.Second},
		ContainerLogMaxWorkers:      ptr.To[int32](4),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{MaxSize: 1024, MaxFiles: 2, MonitorInterval: 3 * time.Second, MaxWorkers: 4}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}

	disabled, err := PolicyFromConfig(&kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxSize: "-1"})
	if err != nil {
		t.Fatal(err)
	}
	if disabled.Enabled() {
		t.Errorf("containerLogMaxSize -1: policy %+v is enabled, want disabled", disabled)
	}
}

func TestPolicyFromConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    kubeletconfigv1beta1.KubeletConfiguration
		want []string // substrings of the error
	}{
		{"size not a quantity", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxSize: "ten megs"},
			[]string{`containerLogMaxSize: Invalid value: "ten megs"`}},
		{"size fraction of a byte", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxSize: "1.5"},
			[]string{"containerLogMaxSize", "whole number of bytes"}},
		{"size zero", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxSize: "0"},
			[]string{"containerLogMaxSize: Invalid value: 0: must be positive"}},
		{"one file", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxFiles: ptr.To[int32](1)},
			[]string{"containerLogMaxFiles: Invalid value: 1: must be greater than 1"}},
		{"interval too short", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMonitorInterval: &metav1.Duration{Duration: time.Second}},
			[]string{`containerLogMonitorInterval: Invalid value: "1s"`}},
		{"no workers", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxWorkers: ptr.To[int32](0)},
			[]string{"containerLogMaxWorkers: Invalid value: 0"}},
		{"all reported", kubeletconfigv1beta1.KubeletConfiguration{ContainerLogMaxSize: "x", ContainerLogMaxFiles: ptr.To[int32](0)},
			[]string{"containerLogMaxSize", "containerLogMaxFiles"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PolicyFromConfig(&tc.c)
			if err == nil {
				t.Fatalf("PolicyFromConfig = %+v, nil; want an error", p)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestNewRejectsInvalidPolicy(t *testing.T) {
	p := DefaultPolicy()
	p.MaxFiles = 1
	if _, err := New(newFakeRuntime(), p); err == nil || !strings.Contains(err.Error(), "containerLogMaxFiles") {
		t.Errorf("New with MaxFiles 1: err = %v, want a containerLogMaxFiles error", err)
	}
	if _, err := New(nil, DefaultPolicy()); err == nil {
		t.Error("New(nil runtime) succeeded")
	}
}
