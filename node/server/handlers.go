package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /pods", s.pods)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{
		ErrorLog:      zapErrorLog{s.log},
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return noCache(mux)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

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
	body, err := json.Marshal(&list)
	if err != nil {
		s.log.Error("encoding /pods", zap.Error(err))
		http.Error(w, "cannot encode pods: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// zapErrorLog is promhttp's error log.
type zapErrorLog struct{ l *zap.Logger }

func (z zapErrorLog) Println(v ...any) {
	z.l.Sugar().Warnln(append([]any{"serving /metrics:"}, v...)...)
}
