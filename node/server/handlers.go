package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// routes serves /healthz, and each other path only when its provider is
// set: the health port has none of them.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	if s.opts.Pods != nil {
		mux.HandleFunc("GET /pods", s.pods)
	}
	if s.opts.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{
			ErrorLog:      zapErrorLog{s.log},
			ErrorHandling: promhttp.ContinueOnError,
		}))
	}
	if s.opts.Summary != nil {
		mux.HandleFunc("GET /stats/summary", s.summary)
	}
	return noCache(mux)
}

// endpoints lists the paths the server serves, for its log line.
func (s *Server) endpoints() []string {
	out := []string{"/healthz"}
	if s.opts.Pods != nil {
		out = append(out, "/pods")
	}
	if s.opts.Gatherer != nil {
		out = append(out, "/metrics")
	}
	if s.opts.Summary != nil {
		out = append(out, "/stats/summary")
	}
	return out
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
	s.writeJSON(w, "/pods", &list)
}

// summary answers /stats/summary; ?only_cpu_and_memory=true asks for the
// CPU-and-memory-only form, as on the kubelet's read-only port.
func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	only := false
	if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			http.Error(w, fmt.Sprintf("invalid only_cpu_and_memory %q: %v", v, err), http.StatusBadRequest)
			return
		}
		only = b
	}
	ctx, cancel := context.WithTimeout(r.Context(), SummaryTimeout)
	defer cancel()
	sum, err := s.opts.Summary.Summary(ctx, only)
	if err != nil {
		s.log.Warn("stats summary failed", zap.Error(err))
		http.Error(w, "stats summary: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.writeJSON(w, "/stats/summary", sum)
}

func (s *Server) writeJSON(w http.ResponseWriter, path string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding "+path, zap.Error(err))
		http.Error(w, "cannot encode "+path+": "+err.Error(), http.StatusInternalServerError)
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
