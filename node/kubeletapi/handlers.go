package kubeletapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthzTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := s.opts.Healthz(ctx); err != nil {
		s.log.Debug("health check failed", zap.Error(err))
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(err.Error() + "\n"))
		return
	}
	_, _ = w.Write([]byte("ok"))
}

func (s *Server) pods(w http.ResponseWriter, _ *http.Request) {
	list := corev1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    []corev1.Pod{},
	}
	for _, p := range s.opts.Pods.List() {
		if p != nil {
			list.Items = append(list.Items, *p)
		}
	}
	s.writeJSON(w, "/pods", &list)
}

// writeJSON answers v as JSON, or 500 if it cannot be encoded.
func (s *Server) writeJSON(w http.ResponseWriter, what string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding response", zap.String("path", what), zap.Error(err))
		http.Error(w, "cannot encode "+what+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// providerError answers err from a data provider: 404 if it wraps
// ErrNotFound, else 500.
func (s *Server) providerError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	s.log.Error("request failed", zap.String("path", r.URL.Path), zap.Error(err))
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
