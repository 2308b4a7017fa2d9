package kubeletapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// DefaultPort is the kubelet's --port.
const DefaultPort = 10250

// Defaults of the cache TTLs: the kubelet's authentication webhook cacheTTL
// (for accepted and rejected tokens alike, as the apiserver's delegating
// authenticator caches them), and its authorization webhook
// cacheAuthorizedTTL and cacheUnauthorizedTTL.
const (
	DefaultTokenCacheTTL       = 2 * time.Minute
	DefaultAuthzAllowCacheTTL  = 5 * time.Minute
	DefaultAuthzDenyCacheTTL   = 30 * time.Second
	DefaultLogPollInterval     = 250 * time.Millisecond
	maxSummaryRequestBodyBytes = 4 << 10
)

// Timeouts of the http.Server and of the calls to the API server. There is
// no read or write timeout: logs with follow=true and the streaming
// endpoints are long-lived.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 90 * time.Second
	// ReviewTimeout bounds one TokenReview or SubjectAccessReview call.
	ReviewTimeout = 10 * time.Second
	// HealthzTimeout bounds one call of Options.Healthz.
	HealthzTimeout = 10 * time.Second
	// StopGrace is how long requests and streams in flight may finish when
	// Start's context ends the server (Shutdown uses its own context).
	StopGrace      = 5 * time.Second
	maxHeaderBytes = 1 << 20
)

// Options configure a Server.
type Options struct {
	// Address is the IP to listen on; empty means all interfaces (the
	// kubelet's --address default is 0.0.0.0).
	Address string
	// Port is the TCP port. 0 means any free port (see Server.Addr): the
	// caller applies DefaultPort.
	Port int
	// NodeName is the name of this node: the name in every
	// SubjectAccessReview, and the host of the self-signed serving
	// certificate. Required.
	NodeName string
	// NodeIPs are added to the self-signed serving certificate, with
	// NodeName. Not used with TLSCertFile.
	NodeIPs []net.IP

	// TLSCertFile and TLSKeyFile are the serving certificate (with its
	// chain) and key, PEM, read once by New. Both empty: a self-signed
	// certificate is made in memory for NodeName and NodeIPs.
	TLSCertFile string
	TLSKeyFile  string
	// ServingCertificate, if set, is asked for the serving certificate at
	// each handshake instead (a certificate obtained from the API server and
	// renewed: serverTLSBootstrap); nil from it fails the handshake.
	ServingCertificate func() *tls.Certificate
	// TLSMinVersion and TLSCipherSuites are the kubelet's tlsMinVersion
	// (VersionTLS12 when empty) and tlsCipherSuites (Go's when empty), by
	// their Go names.
	TLSMinVersion   string
	TLSCipherSuites []string
	// ClientCAFile holds the PEM CA certificates that sign client
	// certificates (the API server's --kubelet-client-certificate); it is
	// reloaded when it changes. Empty disables client-certificate
	// authentication.
	ClientCAFile string

	// Client reviews bearer tokens (TokenReview) and authorizes every
	// authenticated request (SubjectAccessReview). Required.
	Client kubernetes.Interface
	// TokenWebhookDisabled turns bearer token authentication off (the
	// kubelet's authentication.webhook.enabled false).
	TokenWebhookDisabled bool
	// AuthorizeAlways allows every authenticated request without asking
	// (the kubelet's authorization mode AlwaysAllow); false: Webhook.
	AuthorizeAlways bool
	// Anonymous lets requests without valid credentials through as
	// system:anonymous in group system:unauthenticated (they are still
	// authorized). False: they are answered 401.
	Anonymous bool

	// Cache TTLs of review results; 0 means the default. Errors talking to
	// the API server are not cached.
	TokenCacheTTL      time.Duration
	AuthzAllowCacheTTL time.Duration
	AuthzDenyCacheTTL  time.Duration
	// DebuggingHandlersDisabled leaves out /containerLogs, /exec, /attach
	// and /portForward (the kubelet's enableDebuggingHandlers false).
	DebuggingHandlersDisabled bool

	// Pods answers /pods. Required.
	Pods PodLister
	// Healthz answers /healthz: nil error is healthy. Nil means always
	// healthy.
	Healthz func(ctx context.Context) error
	// Summary answers /stats/summary; nil means that path is 404.
	Summary SummaryProvider
	// Metrics answers /metrics and ResourceMetrics /metrics/resource; nil
	// means that path is 404.
	Metrics         prometheus.Gatherer
	ResourceMetrics prometheus.Gatherer
	// Logs answers /containerLogs; nil means that path is 404.
	Logs LogLocator
	// LogPollInterval is how often a followed log file is checked for new
	// lines; 0 means DefaultLogPollInterval.
	LogPollInterval time.Duration
	// Containers and Streamer answer /exec, /attach and /portForward; both
	// are needed, or those paths are 404.
	Containers ContainerResolver
	Streamer   Streamer

	// Logger receives authentication and authorization failures (at debug
	// level), provider errors and the http.Server's own errors. Nil means
	// none.
	Logger *zap.Logger
}

func (o *Options) withDefaults() error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("%w: port %d out of range 0-65535", ErrInvalidOptions, o.Port)
	}
	if o.NodeName == "" {
		return fmt.Errorf("%w: NodeName is required", ErrInvalidOptions)
	}
	if o.Client == nil {
		return fmt.Errorf("%w: Client is required", ErrInvalidOptions)
	}
	if o.Pods == nil {
		return fmt.Errorf("%w: Pods is required", ErrInvalidOptions)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return fmt.Errorf("%w: TLSCertFile and TLSKeyFile go together", ErrInvalidOptions)
	}
	for _, d := range []*time.Duration{&o.TokenCacheTTL, &o.AuthzAllowCacheTTL, &o.AuthzDenyCacheTTL, &o.LogPollInterval} {
		if *d < 0 {
			return fmt.Errorf("%w: negative duration %v", ErrInvalidOptions, *d)
		}
	}
	setDefault(&o.TokenCacheTTL, DefaultTokenCacheTTL)
	setDefault(&o.AuthzAllowCacheTTL, DefaultAuthzAllowCacheTTL)
	setDefault(&o.AuthzDenyCacheTTL, DefaultAuthzDenyCacheTTL)
	setDefault(&o.LogPollInterval, DefaultLogPollInterval)
	if o.Healthz == nil {
		o.Healthz = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}
