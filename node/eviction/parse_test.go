package eviction

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func thresholdStrings(ts []Threshold) []string {
	var out []string
	for _, t := range ts {
		s := t.String()
		if t.MinReclaim != nil {
			s += " min " + t.MinReclaim.String()
		}
		out = append(out, s)
	}
	return out
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kc         *kubeletconfigv1beta1.KubeletConfiguration
		want       []string
		transition time.Duration
		maxGrace   time.Duration
	}{{
		name:       "nil config gives the kubelet defaults",
		want:       []string{"memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%", "imagefs.available<15%"},
		transition: 5 * time.Minute,
	}, {
		name:       "unset evictionHard gives the defaults",
		kc:         &kubeletconfigv1beta1.KubeletConfiguration{EvictionMaxPodGracePeriod: 30},
		want:       []string{"memory.available<100Mi", "nodefs.available<10%", "nodefs.inodesFree<5%", "imagefs.available<15%"},
		transition: 5 * time.Minute, maxGrace: 30 * time.Second,
	}, {
		name:       "explicit empty evictionHard means none",
		kc:         &kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{}},
		transition: 5 * time.Minute,
	}, {
		name: "configured entries replace the defaults; 0% and 100% disable",
		kc: &kubeletconfigv1beta1.KubeletConfiguration{
			EvictionHard:                     map[string]string{"pid.available": "5%", "memory.available": "200Mi", "nodefs.available": "0%", "imagefs.available": "100%"},
			EvictionPressureTransitionPeriod: metav1.Duration{Duration: time.Minute},
		},
		want:       []string{"memory.available<200Mi", "pid.available<5%"},
		transition: time.Minute,
	}, {
		name: "merge defaults under configured entries",
		kc: &kubeletconfigv1beta1.KubeletConfiguration{
			EvictionHard:                 map[string]string{"memory.available": "1Gi", "nodefs.available": "0%"},
			MergeDefaultEvictionSettings: ptr.To(true),
		},
		want:       []string{"memory.available<1Gi", "nodefs.inodesFree<5%", "imagefs.available<15%"},
		transition: 5 * time.Minute,
	}, {
		name: "soft with grace and minimum reclaim",
		kc: &kubeletconfigv1beta1.KubeletConfiguration{
			EvictionHard:              map[string]string{"memory.available": "100Mi", "imagefs.available": "10%"},
			EvictionSoft:              map[string]string{"memory.available": "1.5Gi"},
			EvictionSoftGracePeriod:   map[string]string{"memory.available": "1m30s", "nodefs.available": "10s"},
			EvictionMinimumReclaim:    map[string]string{"memory.available": "0.5Gi", "imagefs.available": "2%"},
			EvictionMaxPodGracePeriod: 60,
		},
		want: []string{"memory.available<100Mi min 512Mi", "imagefs.available<10% min 2%",
			"memory.available<1536Mi (soft, grace 1m30s) min 512Mi"},
		transition: 5 * time.Minute, maxGrace: time.Minute,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.kc)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if got := thresholdStrings(cfg.Thresholds); strings.Join(got, ";") != strings.Join(tc.want, ";") {
				t.Errorf("thresholds = %q, want %q", got, tc.want)
			}
			if cfg.PressureTransitionPeriod != tc.transition || cfg.MaxPodGracePeriod != tc.maxGrace {
				t.Errorf("transition %v maxGrace %v, want %v %v", cfg.PressureTransitionPeriod, cfg.MaxPodGracePeriod, tc.transition, tc.maxGrace)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kc       kubeletconfigv1beta1.KubeletConfiguration
		is       error
		mentions string
	}{
		{"unknown hard signal", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.availabel": "1Gi"}},
			ErrUnknownSignal, `evictionHard["memory.availabel"]`},
		{"unsupported allocatable signal", kubeletconfigv1beta1.KubeletConfiguration{EvictionSoft: map[string]string{"allocatableMemory.available": "1Gi"}},
			ErrUnknownSignal, `evictionSoft["allocatableMemory.available"]`},
		{"bad quantity", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "lots"}},
			ErrBadValue, `evictionHard["memory.available"] = "lots"`},
		{"zero quantity", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "0"}},
			ErrBadValue, `evictionHard["memory.available"] = "0"`},
		{"negative quantity", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "-1Mi"}},
			ErrBadValue, `"-1Mi"`},
		{"bad percentage", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "ten%"}},
			ErrBadValue, `evictionHard["nodefs.available"] = "ten%"`},
		{"percentage over 100", kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "150%"}},
			ErrBadValue, `"150%"`},
		{"soft without grace period", kubeletconfigv1beta1.KubeletConfiguration{
			EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"nodefs.available": "1m"}},
			ErrNoGracePeriod, `evictionSoft["memory.available"]`},
		{"bad grace period", kubeletconfigv1beta1.KubeletConfiguration{
			EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"memory.available": "soon"}},
			ErrBadValue, `evictionSoftGracePeriod["memory.available"] = "soon"`},
		{"negative grace period", kubeletconfigv1beta1.KubeletConfiguration{
			EvictionSoft: map[string]string{"memory.available": "1Gi"}, EvictionSoftGracePeriod: map[string]string{"memory.available": "-1s"}},
			ErrBadValue, `"-1s"`},
		{"grace period for unknown signal", kubeletconfigv1beta1.KubeletConfiguration{EvictionSoftGracePeriod: map[string]string{"disk": "1m"}},
			ErrUnknownSignal, `evictionSoftGracePeriod["disk"]`},
		{"bad minimum reclaim", kubeletconfigv1beta1.KubeletConfiguration{EvictionMinimumReclaim: map[string]string{"imagefs.available": "x"}},
			ErrBadValue, `evictionMinimumReclaim["imagefs.available"] = "x"`},
		{"negative max pod grace", kubeletconfigv1beta1.KubeletConfiguration{EvictionMaxPodGracePeriod: -1},
			ErrBadValue, "evictionMaxPodGracePeriod -1"},
		{"negative transition period", kubeletconfigv1beta1.KubeletConfiguration{EvictionPressureTransitionPeriod: metav1.Duration{Duration: -time.Second}},
			ErrBadValue, "evictionPressureTransitionPeriod -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(&tc.kc)
			if err == nil {
				t.Fatal("ParseConfig succeeded")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("error %q does not mention %s", err, tc.mentions)
			}
		})
	}
}

func TestValueOf(t *testing.T) {
	cfg, err := ParseConfig(&kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "12.5%"}})
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Thresholds[0].Value.Of(*resource_(80 * Gi))
	if q.Value() != 10*Gi || q.String() != "10Gi" {
		t.Errorf("12.5%% of 80Gi = %s", q.String())
	}
}
