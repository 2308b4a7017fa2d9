package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/podstatus"
)

var _ PodLister = (*podstatus.Cache)(nil)

// TestServesPodStatusCache wires the server as actorlet does: a
// podstatus.Cache answers /pods and its metrics are on /metrics.
func TestServesPodStatusCache(t *testing.T) {
	reg := prometheus.NewRegistry()
	cache := podstatus.New(reg, nil)
	opts := testOptions()
	opts.Pods, opts.Gatherer = cache, reg
	s := start(t, opts)

	cache.PodStatus(actors.PodUpdate{UID: "u1", Seq: 1, Pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue}},
		},
	}})

	_, body := do(t, s, http.MethodGet, "/pods")
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	if len(list.Items) != 1 || list.Items[0].UID != "u1" || list.Items[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("/pods = %s; want the one Running pod u1", body)
	}
	_, body = do(t, s, http.MethodGet, "/metrics")
	for _, want := range []string{"\nkubelet_running_pods 1\n", "\nactorlet_pods{phase=\"Running\"} 1\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", strings.TrimSpace(want), body)
		}
	}
}
