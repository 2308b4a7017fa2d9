package sim

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// serveSpec is what a container serves while running (EnvHTTPPort,
// EnvTCPPort and friends). Ports are 0 when not set.
type serveSpec struct {
	httpPort   int
	tcpPort    int
	httpStatus int // default 200
	httpBody   string
	statusFile string
}

func (s serveSpec) any() bool { return s.httpPort != 0 || s.tcpPort != 0 }

// probeServer is the sockets of one running container, so that probes
// of it can be tested without a real runtime:
//   - they listen on <sandbox IP>:port, only if that IP is a loopback
//     address (Linux routes all of 127.0.0.0/8 to lo, so a PodCIDR such as
//     127.88.0.0/16 needs no setup); otherwise the ports are ignored and
//     that is logged once per container start;
//   - they open in StartContainer and close when the container exits
//     (StopContainer, StopPodSandbox and RemoveContainer close them before
//     returning; an exit scripted by SIM_EXIT_AFTER or a delayed stop
//     closes them promptly after) or the Runtime is closed;
//   - an HTTP request reaching an exited container is dropped, never
//     answered;
//   - each costs two goroutines (serving and watching for the exit).
//
// A port already in use (two containers of one sandbox, or a port of
// 127.0.0.1 taken on the machine) is logged at warn level and not served.
type probeServer struct {
	http   *http.Server // nil if not serving HTTP
	tcp    net.Listener // nil if not serving TCP
	status atomic.Int32 // set by SetHTTPStatus; 0: not set
	once   sync.Once
}

// close closes the listeners. Idempotent; does not wait for requests.
func (ps *probeServer) close() {
	ps.once.Do(func() {
		if ps.http != nil {
			_ = ps.http.Close()
		}
		if ps.tcp != nil {
			_ = ps.tcp.Close()
		}
	})
}

// serveLocked opens c's ports, if it has any. c must be RUNNING; r.mu must
// be held.
func (r *Runtime) serveLocked(c *container) {
	spec := c.behaviour.serve
	if !spec.any() || c.served() != nil {
		return
	}
	ip := c.sb.ip
	log := r.log.With(zap.String("container", c.id), zap.Stringer("name", c), zap.Stringer("ip", ip))
	if !ip.IsLoopback() {
		log.Info("SIM_HTTP_PORT/SIM_TCP_PORT ignored: the pod IP is not a loopback address (use a PodCIDR in 127.0.0.0/8)")
		return
	}
	// A container of the sandbox that exited on a timer may still hold
	// its ports until its watcher runs; a restart must get them.
	r.reapServersLocked(c.sb)
	ps := &probeServer{}
	if spec.httpPort != 0 {
		addr := netip.AddrPortFrom(ip, uint16(spec.httpPort)).String()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			log.Warn("cannot serve SIM_HTTP_PORT", zap.Error(err))
		} else {
			ps.http = &http.Server{
				Handler:           r.probeHandler(c, ps),
				ReadHeaderTimeout: 10 * time.Second,
				ErrorLog:          zap.NewStdLog(log),
			}
			go func() { _ = ps.http.Serve(ln) }()
		}
	}
	if spec.tcpPort != 0 {
		addr := netip.AddrPortFrom(ip, uint16(spec.tcpPort)).String()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			log.Warn("cannot serve SIM_TCP_PORT", zap.Error(err))
		} else {
			ps.tcp = ln
			go acceptAndClose(ln)
		}
	}
	if ps.http == nil && ps.tcp == nil {
		return
	}
	exited, closed := c.exitedChan(), r.events.done()
	c.waits.served = ps
	go func() {
		select {
		case <-exited:
		case <-closed:
		}
		ps.close()
	}()
}

// acceptAndClose accepts connections and closes them at once: a TCP probe
// only connects. It returns when ln is closed.
func acceptAndClose(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		_ = conn.Close()
	}
}

// probeHandler answers every request with the container's status and
// body, while it runs.
func (r *Runtime) probeHandler(c *container, ps *probeServer) http.Handler {
	spec := c.behaviour.serve
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.mu.Lock()
		running := c.state == runtimeapi.ContainerState_CONTAINER_RUNNING
		r.mu.Unlock()
		if !running {
			panic(http.ErrAbortHandler) // the process is gone: drop the connection
		}
		w.WriteHeader(httpStatus(spec, ps))
		_, _ = w.Write([]byte(spec.httpBody))
	})
}

// httpStatus is SetHTTPStatus's code, else the status file's, else
// SIM_HTTP_STATUS.
func httpStatus(spec serveSpec, ps *probeServer) int {
	if s := ps.status.Load(); s != 0 {
		return int(s)
	}
	if spec.statusFile != "" {
		if b, err := os.ReadFile(spec.statusFile); err == nil {
			if s, err := parseStatus(EnvHTTPStatusFile, strings.TrimSpace(string(b))); err == nil {
				return s
			}
		}
	}
	return spec.httpStatus
}

// stopServingLocked closes c's ports, if open. r.mu must be held.
func (r *Runtime) stopServingLocked(c *container) {
	if ps := c.served(); ps != nil {
		ps.close()
		c.waits.served = nil
	}
}

// reapServersLocked closes the ports of sb's containers that are not
// running. r.mu must be held.
func (r *Runtime) reapServersLocked(sb *sandbox) {
	for _, c := range sb.containers {
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			r.stopServingLocked(c)
		}
	}
}

// SetHTTPStatus makes the HTTP server of a running container (EnvHTTPPort)
// answer code from now on, overriding EnvHTTPStatus and
// EnvHTTPStatusFile; code 0 removes the override. In-process only (not a
// CRI call): for tests that hold the *Runtime. Errors: NotFound for an
// unknown container, FailedPrecondition if it is not serving HTTP,
// InvalidArgument for a code outside 100..999.
func (r *Runtime) SetHTTPStatus(containerID string, code int) error {
	if code != 0 && (code < 100 || code > 999) {
		return newErr(ErrInvalidArgument, "SetHTTPStatus %q: status %d is not in 100..999", containerID, code)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[containerID]
	if !ok {
		return newErr(ErrNotFound, "SetHTTPStatus: container %q not found", containerID)
	}
	ps := c.served()
	if ps == nil || ps.http == nil {
		return newErr(ErrFailedPrecondition, "SetHTTPStatus %s (%s): container is not serving HTTP", c, c.id)
	}
	ps.status.Store(int32(code))
	return nil
}

func parsePort(key, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, newErr(ErrInvalidArgument, "env %s=%q: want a port number in 1..65535", key, v)
	}
	return n, nil
}

func parseStatus(key, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 || n > 999 {
		return 0, newErr(ErrInvalidArgument, "env %s=%q: want an HTTP status in 100..999", key, v)
	}
	return n, nil
}
