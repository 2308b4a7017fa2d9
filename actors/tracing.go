package actors

import (
	"context"
	"reflect"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/node/tracing"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Tracing (Deps.TracerProvider): the spans a pod's actors emit, as the
// kubelet's pod worker does (see package node/tracing for the tree).
//
// A PodActor's sync is traced only when it did something: journaled events
// or started an effect. Its span is made lazily, with the sync's start time,
// so that the many syncs that change nothing (a tick, a runtime view that
// matches the journal) cost nothing and show nothing. The effects a sync
// starts are its children: they are carried out later by ContainerActors,
// and their CRI calls are theirs (the otelgrpc handler on the CRI
// connection, see cri.Options.TracerProvider). The sync that takes an
// effect's result is linked to the effect's span.

// syncTrace is one PodActor sync being traced; nil when tracing is off.
type syncTrace struct {
	tracer trace.Tracer
	name   string
	start  time.Time
	attrs  []attribute.KeyValue
	link   trace.SpanContext
	// span is nil until the sync turns out to do something.
	span trace.Span
}

// effectTrace is what a ContainerActor needs to trace an effect: its
// parent (the sync that started it) and the journal sequence it was
// decided at.
type effectTrace struct {
	parent trace.SpanContext
	seq    uint64
}

// beginSync starts tracing one sync of the pod: in, decided at now into
// events and st (the state once adopted). The span exists at once if the
// sync journals events; otherwise once it starts an effect (traceEffect).
// endSync ends it.
func (a *podActor) beginSync(in lifecycle.Input, now time.Time, events []*pb.Envelope, st *lifecycle.State) {
	a.sync = nil
	if a.deps.TracerProvider == nil {
		return
	}
	name := "syncPod"
	switch {
	case st.P.GetTerminated():
		name = "syncTerminatedPod"
	case st.P.GetTerminating():
		name = "syncTerminatingPod"
	}
	ns, podName := "", ""
	if st.Pod != nil {
		ns, podName = st.Pod.Namespace, st.Pod.Name
	}
	attrs := append(tracing.Pod(a.uid, ns, podName),
		tracing.UpdateTypeKey.String(updateType(in, a.state())),
		tracing.InputKey.String(string(in.ProtoReflect().Descriptor().Name())))
	s := &syncTrace{tracer: a.deps.TracerProvider.Tracer(tracing.InstrumentationScope), name: name, start: now, attrs: attrs}
	if a.traceLink != nil {
		s.link = *a.traceLink
	}
	a.sync = s
	if n := len(events); n > 0 {
		sp := s.open()
		sp.SetAttributes(tracing.JournalSeqFirstKey.Int64(int64(events[0].GetSeq())),
			tracing.JournalSeqLastKey.Int64(int64(events[n-1].GetSeq())),
			tracing.JournalSeqKey.Int64(int64(events[n-1].GetSeq())))
		for _, env := range events {
			sp.AddEvent(env.GetEvent().Name(), trace.WithTimestamp(time.Unix(0, env.GetTimeUnixNano())),
				trace.WithAttributes(tracing.JournalSeqKey.Int64(int64(env.GetSeq()))))
		}
	}
}

// syncFailed marks the sync's span failed: its events could not be
// journaled (nothing of it happened).
func (a *podActor) syncFailed(err error) {
	if a.sync == nil || a.sync.span == nil {
		return
	}
	a.sync.span.RecordError(err)
	a.sync.span.SetStatus(codes.Error, "journal append failed: "+err.Error())
}

// endSync ends the sync's span, if it has one.
func (a *podActor) endSync() {
	if a.sync != nil && a.sync.span != nil {
		a.sync.span.End()
	}
	a.sync = nil
}

// traceEffect returns what the ContainerActor needs to trace an effect this
// sync starts (making the sync's span if need be).
func (a *podActor) traceEffect() effectTrace {
	if a.sync == nil {
		return effectTrace{}
	}
	sp := a.sync.open()
	if a.state() != nil {
		sp.SetAttributes(tracing.JournalSeqKey.Int64(int64(a.state().P.GetSeq())))
		return effectTrace{parent: sp.SpanContext(), seq: a.state().P.GetSeq()}
	}
	return effectTrace{parent: sp.SpanContext()}
}

// open makes the sync's span, started when the sync was.
func (s *syncTrace) open() trace.Span {
	if s.span == nil {
		opts := []trace.SpanStartOption{trace.WithTimestamp(s.start), trace.WithAttributes(s.attrs...)}
		if s.link.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: s.link}))
		}
		// Background, not the pod's context: a sync's span is a root (its
		// cause is linked, not a parent), and no I/O runs on this context.
		_, s.span = s.tracer.Start(context.Background(), s.name, opts...)
	}
	return s.span
}

// updateType is the kubelet's SyncPodType for an input: create for a pod's
// first spec, update for a later one, kill for its removal or eviction,
// sync for everything else.
func updateType(in lifecycle.Input, before *lifecycle.State) string {
	switch in.(type) {
	case *pb.PodDesired:
		if before == nil || before.Pod == nil {
			return "create"
		}
		return "update"
	case *pb.PodUndesired, *pb.PodEvict:
		return "kill"
	}
	return "sync"
}

// startEffect starts the span of an effect a ContainerActor carries out,
// as a child of the sync that started it; ctx carries it to the CRI calls.
// A nil span: tracing is off.
func (a *containerActor) startEffect(ctx context.Context, m *runEffect) (context.Context, trace.Span) {
	if a.deps.TracerProvider == nil {
		return ctx, nil
	}
	if m.trace.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, m.trace.parent)
	}
	name, container, id, attempt := effectSpan(m.effect)
	ns, podName := "", ""
	if m.pod != nil {
		ns, podName = m.pod.Namespace, m.pod.Name
	}
	attrs := append(tracing.Pod(a.uid, ns, podName), tracing.Container(container, id)...)
	attrs = append(attrs, tracing.EffectKey.String(m.effect.Key()))
	if m.trace.seq != 0 {
		attrs = append(attrs, tracing.JournalSeqKey.Int64(int64(m.trace.seq)))
	}
	if attempt != 0 {
		attrs = append(attrs, tracing.AttemptKey.Int(int(attempt)))
	}
	return a.deps.TracerProvider.Tracer(tracing.InstrumentationScope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// endEffect ends an effect's span with its outcome and returns the span's
// context, for the link from the sync that takes the result.
func endEffect(sp trace.Span, res *pb.EffectResult, err error) trace.SpanContext {
	if sp == nil {
		return trace.SpanContext{}
	}
	if id := res.GetId(); id != "" {
		sp.SetAttributes(tracing.ResultIDKey.String(id))
	}
	if err != nil || res.GetFailed() {
		if err != nil {
			sp.RecordError(err)
		}
		sp.SetAttributes(tracing.ReasonKey.String(res.GetReason()))
		sp.SetStatus(codes.Error, res.GetReason()+": "+res.GetMessage())
	}
	sp.End()
	return sp.SpanContext()
}

// effectSpan names an effect's span after the kubelet's kuberuntime step
// that does the same (createPodSandbox, startContainer, killContainer, ...;
// the kubelet logs these steps and traces only their CRI calls) and gives
// the container, ID and attempt it concerns.
func effectSpan(e lifecycle.Effect) (name, container, id string, attempt uint32) {
	switch e := e.(type) {
	case lifecycle.RunSandbox:
		return "createPodSandbox", "", "", e.Attempt
	case lifecycle.PullImage:
		return "pullImage", e.Container, "", e.Attempt
	case lifecycle.CreateContainer:
		return "createContainer", e.Name, "", e.Attempt
	case lifecycle.StartContainer:
		return "startContainer", e.Name, e.ID, e.Attempt
	case lifecycle.StopContainer:
		return "killContainer", e.Name, e.ID, e.Attempt
	case lifecycle.RemoveContainer:
		return "removeContainer", e.Name, e.ID, 0
	case lifecycle.StopSandbox:
		return "stopPodSandbox", "", e.ID, 0
	case lifecycle.RemoveSandbox:
		return "removePodSandbox", "", e.ID, 0
	case lifecycle.RunHook:
		// actorlet's own lifecycle hooks (Extending actorlet); no kubelet step.
		return "runLifecycleHook", e.Container, "", e.Attempt
	}
	// Any other effect (a hook, ...): its type's name, lower camel case.
	if name = reflect.TypeOf(e).Name(); name == "" {
		return "effect", "", "", 0
	}
	return strings.ToLower(name[:1]) + name[1:], "", "", 0
}
