package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// containerLogs answers /containerLogs/{namespace}/{pod}/{container}: the
// container's log as text, selected by the query parameters of
// PodLogOptions (follow, previous, timestamps, tailLines or its legacy
// name tail, sinceSeconds, sinceTime, limitBytes). Bad values are 400, both
// sinceSeconds and sinceTime 422, an unknown pod, container or log 404.
// A followed log is flushed whenever the reader reaches the end of the
// file, and ends when the client goes away; any log is flushed before the
// response ends (see the end of containerLogs).
func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) {
	ns, pod, ctr := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, previous, status, err := parseLogQuery(r.URL.Query(), time.Now())
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	ctx := r.Context()
	path, err := s.opts.Logs.ContainerLogPath(ctx, ns, pod, ctr, previous)
	if err != nil {
		s.providerError(w, r, fmt.Errorf("log of container %q of pod %s/%s: %w", ctr, ns, pod, err))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		s.providerError(w, r, fmt.Errorf("log of container %q of pod %s/%s: %w", ctr, ns, pod, err))
		return
	}
	rc := http.NewResponseController(w)
	fl := logFollower{path: path, poll: s.opts.LogPollInterval, log: s.log, flush: func() { _ = rc.Flush() }}
	if previous {
		opts.follow = false // a previous instance writes no more
	}
	if opts.follow {
		if c, ok := s.opts.Logs.(ContainerRunningChecker); ok {
			fl.running = func(ctx context.Context) (bool, error) {
				return c.ContainerRunning(ctx, ns, pod, ctr)
			}
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if err := readLog(ctx, f, w, opts, fl); err != nil && ctx.Err() == nil {
		s.log.Warn("streaming a container log", zap.String("namespace", ns), zap.String("pod", pod),
			zap.String("container", ctr), zap.Error(err))
	}
	// The log goes out before the end of the response, never with it:
	// chunked (no Content-Length) and flushed, as the kubelet's flushed
	// writes send it. The API server's WebSocket log stream
	// (wsstream.Reader) drops the data of a body read that also returns
	// io.EOF, which a Content-Length body's last read does, and a chunked
	// one's does when the final chunk is already buffered.
	fl.flush()
}

// parseLogQuery reads the log options of a /containerLogs query; on error
// it also returns the HTTP status to answer.
func parseLogQuery(q url.Values, now time.Time) (opts logOptions, previous bool, status int, err error) {
	opts.tailLines = -1
	bad := func(name string, err error) (logOptions, bool, int, error) {
		return logOptions{}, false, http.StatusBadRequest, fmt.Errorf("invalid %s %q: %w", name, q.Get(name), err)
	}
	for name, dst := range map[string]*bool{"follow": &opts.follow, "previous": &previous, "timestamps": &opts.timestamps} {
		if v := q.Get(name); v != "" {
			if *dst, err = strconv.ParseBool(v); err != nil {
				return bad(name, err)
			}
		}
	}
	tailName := "tailLines"
	if q.Get("tail") != "" && q.Get("tailLines") == "" {
		tailName = "tail" // the legacy name; "all" means no tail
	}
	if v := q.Get(tailName); v != "" && v != "all" {
		if opts.tailLines, err = strconv.ParseInt(v, 10, 64); err != nil || opts.tailLines < 0 {
			return bad(tailName, errors.Join(err, errors.New("must be a number of lines, 0 or more")))
		}
	}
	if v := q.Get("limitBytes"); v != "" {
		if opts.limitBytes, err = strconv.ParseInt(v, 10, 64); err != nil || opts.limitBytes < 1 {
			return bad("limitBytes", errors.Join(err, errors.New("must be 1 or more")))
		}
	}
	secs, at := q.Get("sinceSeconds"), q.Get("sinceTime")
	if secs != "" && at != "" {
		return logOptions{}, false, http.StatusUnprocessableEntity,
			errors.New("at most one of sinceSeconds and sinceTime may be given")
	}
	if secs != "" {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || n < 1 {
			return bad("sinceSeconds", errors.Join(err, errors.New("must be 1 or more")))
		}
		if n < int64(math.MaxInt64/time.Second) {
			opts.since = now.Add(-time.Duration(n) * time.Second)
		} // else before any log: all of it
	}
	if at != "" {
		if opts.since, err = time.Parse(time.RFC3339, at); err != nil {
			return bad("sinceTime", err)
		}
	}
	return opts, previous, 0, nil
}
