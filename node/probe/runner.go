package probe

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Exec runs a command in a container; actorlet's cri.Client implements
// it. The call should end within timeout (0: no limit) or when ctx ends.
type Exec interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error)
}

// Prober carries out one probe; Runner is the real one. Workers use it.
type Prober interface {
	Probe(ctx context.Context, t Target, h corev1.ProbeHandler, timeout time.Duration) (Result, string)
}

// Version strings sent in User-Agent, as the kubelet of that version.
const (
	UserAgent     = "kube-probe/1.37"
	HookUserAgent = "kube-lifecycle/1.37"
)

// DefaultTimeout is a probe's timeout when timeoutSeconds is not set.
const DefaultTimeout = time.Second

// maxBody is how much of an HTTP answer is read, as the kubelet.
const maxBody = 10 << 10

// Runner carries out probes and hooks. The zero value works for all but
// exec handlers, which need Exec. Safe for concurrent use once in use;
// set the fields before the first call.
type Runner struct {
	// Exec runs exec probes and hooks.
	Exec Exec
	// Clock times the sleep hook. Default: the real clock. Network
	// timeouts are real-time deadlines whatever the clock.
	Clock clock.Clock

	once   sync.Once
	client *http.Client
}

var _ Prober = (*Runner)(nil)

// Probe runs handler h once against t, within timeout (0: DefaultTimeout),
// and returns the result and a message: the command's output, the HTTP
// body or the reason of a failure. Unknown means the probe could not be
// carried out (its result should be thrown away). A ProbeHandler with no
// action set is Unknown.
func (r *Runner) Probe(ctx context.Context, t Target, h corev1.ProbeHandler, timeout time.Duration) (Result, string) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch {
	case h.Exec != nil:
		return r.execProbe(ctx, t, h.Exec.Command, timeout)
	case h.HTTPGet != nil:
		return r.httpProbe(ctx, t, h.HTTPGet, timeout)
	case h.TCPSocket != nil:
		return tcpProbe(ctx, t, h.TCPSocket, timeout)
	case h.GRPC != nil:
		return grpcProbe(ctx, t, h.GRPC, timeout)
	}
	return Unknown, "probe has no handler"
}

// httpClient is shared by all HTTP probes and hooks: no keep-alive, no
// proxy, no compression, certificates not verified, redirects only to
// the same host (as the kubelet's prober).
func (r *Runner) httpClient() *http.Client {
	r.once.Do(func() {
		tr := &http.Transport{
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the kubelet does not verify probe targets
			DisableKeepAlives:   true,
			DisableCompression:  true,
			Proxy:               nil,
			DialContext:         (&net.Dialer{}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
		}
		r.client = &http.Client{Transport: tr, CheckRedirect: sameHostRedirects}
	})
	return r.client
}

func (r *Runner) clock() clock.Clock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}
