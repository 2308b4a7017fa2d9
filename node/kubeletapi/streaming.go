package kubeletapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The query parameters of /exec and /attach, as the API server sends them
// (booleans as "1" or "true").
const (
	paramCommand = "command"
	paramStdin   = "input"
	paramStdout  = "output"
	paramStderr  = "error"
	paramTTY     = "tty"
	paramPort    = "port"
)

// streamOptions are the streams asked for by an /exec or /attach query.
type streamOptions struct {
	stdin, stdout, stderr, tty bool
}

func parseStreamOptions(q url.Values) (streamOptions, error) {
	var o streamOptions
	for name, dst := range map[string]*bool{paramStdin: &o.stdin, paramStdout: &o.stdout, paramStderr: &o.stderr, paramTTY: &o.tty} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, fmt.Errorf("invalid %s %q: %w", name, v, err)
		}
		*dst = b
	}
	if o.tty {
		o.stderr = false // a terminal merges stderr into stdout
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, errors.New("at least one of input, output and error must be requested")
	}
	return o, nil
}

// exec answers /exec/{namespace}/{pod}[/{uid}]/{container}: the command
// (the repeated "command" parameters) runs in the container through the
// runtime's streaming server, to which the client's upgrade request is
// proxied.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	so, err := parseStreamOptions(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := q[paramCommand]
	if len(cmd) == 0 {
		http.Error(w, "no command given", http.StatusBadRequest)
		return
	}
	id, ok := s.containerID(w, r)
	if !ok {
		return
	}
	resp, err := s.opts.Streamer.Exec(r.Context(), &runtimeapi.ExecRequest{
		ContainerId: id, Cmd: cmd, Tty: so.tty, Stdin: so.stdin, Stdout: so.stdout, Stderr: so.stderr,
	})
	if err != nil {
		s.providerError(w, r, fmt.Errorf("exec in container %s: %w", id, err))
		return
	}
	s.proxyStream(w, r, "exec", resp.GetUrl())
}

// attach answers /attach/{namespace}/{pod}[/{uid}]/{container}, like exec
// but to the container's main process.
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	so, err := parseStreamOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, ok := s.containerID(w, r)
	if !ok {
		return
	}
	resp, err := s.opts.Streamer.Attach(r.Context(), &runtimeapi.AttachRequest{
		ContainerId: id, Tty: so.tty, Stdin: so.stdin, Stdout: so.stdout, Stderr: so.stderr,
	})
	if err != nil {
		s.providerError(w, r, fmt.Errorf("attach to container %s: %w", id, err))
		return
	}
	s.proxyStream(w, r, "attach", resp.GetUrl())
}

// portForward answers /portForward/{namespace}/{pod}[/{uid}]. The ports
// come in the stream headers (SPDY); "port" parameters, if any, are
// passed to the runtime too.
func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	var ports []int32
	for _, v := range r.URL.Query()[paramPort] {
		p, err := strconv.ParseUint(v, 10, 16)
		if err != nil || p == 0 {
			http.Error(w, fmt.Sprintf("invalid port %q", v), http.StatusBadRequest)
			return
		}
		ports = append(ports, int32(p))
	}
	ns, pod := r.PathValue("namespace"), r.PathValue("pod")
	id, err := s.opts.Containers.SandboxID(r.Context(), ns, pod, r.PathValue("uid"))
	if err != nil {
		s.providerError(w, r, fmt.Errorf("sandbox of pod %s/%s: %w", ns, pod, err))
		return
	}
	resp, err := s.opts.Streamer.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: id, Port: ports})
	if err != nil {
		s.providerError(w, r, fmt.Errorf("port-forward to sandbox %s: %w", id, err))
		return
	}
	s.proxyStream(w, r, "portForward", resp.GetUrl())
}

// containerID resolves the container of the request's path, answering the
// error itself if it cannot.
func (s *Server) containerID(w http.ResponseWriter, r *http.Request) (string, bool) {
	ns, pod, ctr := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	id, err := s.opts.Containers.ContainerID(r.Context(), ns, pod, r.PathValue("uid"), ctr)
	if err != nil {
		s.providerError(w, r, fmt.Errorf("container %q of pod %s/%s: %w", ctr, ns, pod, err))
		return "", false
	}
	return id, true
}

// proxyStream proxies the client's upgrade request to the runtime's
// streaming URL and, once both sides have upgraded, copies bytes both ways
// until either side closes. A request that is not an upgrade is 400. The
// hijacked connection is tracked, so Shutdown can close it.
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, what, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		s.providerError(w, r, fmt.Errorf("%s: the runtime returned a bad streaming URL %q: %w", what, rawURL, err))
		return
	}
	user := ""
	if ui := userFrom(r.Context()); ui != nil {
		user = ui.GetName()
	}
	s.log.Debug("proxying a stream", zap.String("kind", what), zap.String("path", r.URL.Path), zap.String("user", user))
	h := proxy.NewUpgradeAwareHandler(u, nil, false, true, streamResponder{s})
	h.ServeHTTP(hijackTracker{ResponseWriter: w, set: s.streams}, r)
}

// streamResponder answers proxy errors that happen before the upgrade.
type streamResponder struct{ s *Server }

func (sr streamResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	sr.s.log.Warn("proxying a stream", zap.String("path", r.URL.Path), zap.Error(err))
	http.Error(w, err.Error(), http.StatusInternalServerError)
}
