package podevents

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Log writes the same events as the Recorder to the node's log, one line
// each: Warning events at warn level, Normal ones at info, with the pod's
// namespace/name and UID, the reason, the container and the message (so an
// image pull's duration, the runtime's message of a failure). A hook's
// failure, whose output the API event leaves out, is logged with it. It
// implements actors.EventSink.
type Log struct {
	log *zap.Logger
}

var _ actors.EventSink = Log{}

// NewLog returns a Log writing to log.
func NewLog(log *zap.Logger) Log { return Log{log: log} }

// Recorded implements actors.EventSink.
func (l Log) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	if pod == nil || !l.log.Core().Enabled(zapcore.WarnLevel) {
		return // not even a warning would be written: nothing to translate
	}
	for _, env := range events {
		ev := env.GetEvent()
		if p := ev.GetProbeChanged(); p != nil {
			l.probeChanged(pod, p)
			continue
		}
		for _, e := range Translate(pod, ev) {
			if h := ev.GetHookFailed(); h != nil {
				l.write(pod, e, zap.String("hook", h.Hook), zap.String("output", h.Message))
				continue
			}
			l.write(pod, e)
		}
	}
}

// Acting implements actors.EventSink.
func (l Log) Acting(pod *corev1.Pod, effect lifecycle.Effect) {
	if pod == nil || !l.log.Core().Enabled(zapcore.InfoLevel) {
		return
	}
	var e Event
	switch eff := effect.(type) {
	case lifecycle.PullImage:
		e = Event{corev1.EventTypeNormal, Pulling, "Pulling image " + eff.Image, eff.Container}
	default:
		return
	}
	l.write(pod, e)
}

func (l Log) fields(pod *corev1.Pod, e Event) []zap.Field {
	fields := []zap.Field{zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("podUID", string(pod.UID)),
		zap.String("reason", e.Reason)}
	if e.Container != "" {
		fields = append(fields, zap.String("container", e.Container))
	}
	return fields
}

// write logs e with the pod's fields and extra: a Warning event at warn
// level, a Normal one at info. The fields are made only when the line is
// written.
func (l Log) write(pod *corev1.Pod, e Event, extra ...zap.Field) {
	lvl := zapcore.InfoLevel
	if e.Type == corev1.EventTypeWarning {
		lvl = zapcore.WarnLevel
	}
	if ce := l.log.Check(lvl, e.Message); ce != nil {
		ce.Write(append(l.fields(pod, e), extra...)...)
	}
}

var _ actors.ProbeSink = Log{}

// Probed implements actors.ProbeSink: each probe run's event at debug
// level (the kubelet logs them at V(1)); the thresholded changes are
// logged when journaled.
func (l Log) Probed(pod *corev1.Pod, p actors.Probed) {
	if pod == nil || !l.log.Core().Enabled(zapcore.DebugLevel) {
		return
	}
	if e, ok := ProbeEvent(p); ok {
		l.log.Debug(e.Message, l.fields(pod, e)...)
	}
}

// probeChanged logs a probe's thresholded result: a failure at warn level,
// a success at info.
func (l Log) probeChanged(pod *corev1.Pod, p *pb.ProbeChanged) {
	e := Event{corev1.EventTypeNormal, "ProbeSucceeded", probeName(p.Kind) + " probe succeeded", p.Name}
	if !p.Success {
		e = Event{corev1.EventTypeWarning, Unhealthy, fmt.Sprintf("%s probe failed: %s", probeName(p.Kind), p.Message), p.Name}
		switch p.Kind {
		case pb.ProbeKind_PROBE_READINESS:
			e.Message += "; the container is not ready"
		default:
			e.Message += "; the container will be restarted"
		}
	}
	l.write(pod, e)
}
