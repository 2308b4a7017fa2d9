package app

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/go-logr/zapr"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/actorlet/actorlet/node/kubeletconfig"
)

type logOptions struct {
	level  string
	format string
}

func (o *logOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.level, "log-level", "info", "log level: debug, info, warn, error (default: from --v, debug from 4 on)")
	fs.StringVar(&o.format, "log-format", "json", "log format: json or console (default: from --logging-format as the kubelet, json for actorlet run)")
}

// debugVerbosity is the --v from which actorlet logs at debug level (the
// Kubernetes logging conventions' "debug level verbosity").
const debugVerbosity = 4

// resolveLogging settles the log level and format: --log-level and
// --log-format when given; otherwise the level from --v (logging.verbosity)
// and, as the kubelet, the format from --logging-format (logging.format:
// text is zap's console encoder), except that actorlet run logs JSON unless
// --logging-format is given.
func resolveLogging(o logOptions, kc *kubeletconfigv1beta1.KubeletConfiguration, fs *pflag.FlagSet, p kubeletconfig.Profile) logOptions {
	if !fs.Changed("log-level") && kc.Logging.Verbosity >= debugVerbosity {
		o.level = "debug"
	}
	if !fs.Changed("log-format") && (p == kubeletconfig.KubeletProfile || fs.Changed("logging-format")) {
		o.format = "json"
		if kc.Logging.Format == "text" {
			o.format = "console"
		}
	}
	return o
}

// build returns the process logger; everything, protoactor's slog output
// included, goes through its core to stderr.
func (o *logOptions) build() (*zap.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(o.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", o.level, err)
	}
	var cfg zap.Config
	switch o.format {
	case "json":
		cfg = zap.NewProductionConfig()
	case "console":
		cfg = zap.NewDevelopmentConfig()
		// A line per event, as the kubelet's text format: no stack traces.
		cfg.Development = false
		cfg.DisableStacktrace = true
	default:
		return nil, fmt.Errorf("--log-format %q: want json or console", o.format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	return cfg.Build(zap.WrapCore(newUniqueKeys))
}

// logger builds the node's logger and sends the libraries' klog output
// (client-go's) through it, with klog's verbosity set to --v.
func (nc *nodeConfig) logger() (*zap.Logger, error) {
	log, err := nc.log.build()
	if err != nil {
		return nil, err
	}
	var kfs flag.FlagSet
	klog.InitFlags(&kfs)
	_ = kfs.Set("v", strconv.Itoa(int(nc.kc.Logging.Verbosity)))
	klog.SetLogger(zapr.NewLogger(log.Named("klog")))
	return log, nil
}

// logStart logs, once, what the configuration left aside: one warning for
// the flags and fields accepted and not acted on, and each warning from
// reading it.
func (nc *nodeConfig) logStart(log *zap.Logger) {
	if len(nc.ignoredFlags)+len(nc.ignoredFields) > 0 {
		log.Warn("accepted and ignored: actorlet does not implement these kubelet flags and configuration fields",
			zap.Strings("flags", nc.ignoredFlags), zap.Strings("configFields", nc.ignoredFields), zap.String("config", nc.node.ConfigFile))
	}
	for _, w := range nc.warnings {
		log.Warn("kubelet configuration", zap.Error(w))
	}
}

// apiLimits sets client-go's rate limits and content type from the
// configuration (kubeAPIQPS, kubeAPIBurst, contentType).
func apiLimits(cfg *rest.Config, kc *kubeletconfigv1beta1.KubeletConfiguration) {
	cfg.QPS, cfg.Burst = float32(*kc.KubeAPIQPS), int(kc.KubeAPIBurst)
	cfg.ContentType = kc.ContentType
	cfg.UserAgent = "actorlet/" + Version
}

// actorLogging routes protoactor's slog output into the zap core. After
// stopping is called, its dead letters (messages to actors already gone,
// expected while the node shuts down) are logged at debug level.
func actorLogging(log *zap.Logger) (opt actor.ConfigOption, stopping func()) {
	h := &shutdownHandler{Handler: zapslog.NewHandler(log.Named("protoactor").Core()), stopping: &atomic.Bool{}}
	return actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(h) }),
		func() { h.stopping.Store(true) }
}

// shutdownHandler demotes protoactor's "[DeadLetter]" records to debug
// once stopping is set.
type shutdownHandler struct {
	slog.Handler
	stopping *atomic.Bool
}

func (h *shutdownHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l) || (h.stopping.Load() && h.Handler.Enabled(ctx, slog.LevelDebug))
}

func (h *shutdownHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.stopping.Load() && r.Message == "[DeadLetter]" && r.Level > slog.LevelDebug {
		r.Level = slog.LevelDebug
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *shutdownHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &shutdownHandler{Handler: h.Handler.WithAttrs(attrs), stopping: h.stopping}
}

func (h *shutdownHandler) WithGroup(name string) slog.Handler {
	return &shutdownHandler{Handler: h.Handler.WithGroup(name), stopping: h.stopping}
}
