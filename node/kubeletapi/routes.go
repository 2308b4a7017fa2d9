package kubeletapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes is the mux behind the auth filter. GET patterns serve HEAD too.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /pods", s.pods)
	if s.opts.Summary != nil {
		mux.HandleFunc("GET /stats/summary", s.summary)
		mux.HandleFunc("POST /stats/summary", s.summary)
	}
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", s.metricsHandler(s.opts.Metrics))
	}
	if s.opts.ResourceMetrics != nil {
		mux.Handle("GET /metrics/resource", s.metricsHandler(s.opts.ResourceMetrics))
	}
	if s.opts.Logs != nil && !s.opts.DebuggingHandlersDisabled {
		mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.containerLogs)
	}
	if s.opts.Containers != nil && s.opts.Streamer != nil && !s.opts.DebuggingHandlersDisabled {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			mux.HandleFunc(method+" /exec/{namespace}/{pod}/{container}", s.exec)
			mux.HandleFunc(method+" /exec/{namespace}/{pod}/{uid}/{container}", s.exec)
			mux.HandleFunc(method+" /attach/{namespace}/{pod}/{container}", s.attach)
			mux.HandleFunc(method+" /attach/{namespace}/{pod}/{uid}/{container}", s.attach)
			mux.HandleFunc(method+" /portForward/{namespace}/{pod}", s.portForward)
			mux.HandleFunc(method+" /portForward/{namespace}/{pod}/{uid}", s.portForward)
		}
	}
	return noCache(mux)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func (s *Server) metricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      zapErrorLog{s},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// zapErrorLog is promhttp's error log.
type zapErrorLog struct{ s *Server }

func (z zapErrorLog) Println(v ...any) {
	z.s.log.Sugar().Warnln(append([]any{"serving metrics:"}, v...)...)
}
