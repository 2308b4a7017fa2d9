package agent

import (
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors"
)

// sourceLog logs, at info level, the pods each snapshot of a source adds,
// updates and removes (namespace/name, UID, source), as the kubelet's
// "SyncLoop ADD/UPDATE/REMOVE". An update is a change the node acts on:
// spec, labels, annotations, or a deletion; status writes are not logged.
// Safe for concurrent use.
type sourceLog struct {
	log  *zap.Logger
	mu   sync.Mutex
	last map[string]map[types.UID]*corev1.Pod
}

func newSourceLog(log *zap.Logger) *sourceLog {
	return &sourceLog{log: log, last: map[string]map[types.UID]*corev1.Pod{}}
}

func (l *sourceLog) observe(snap *actors.SourceSnapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.last[snap.Source]
	now := make(map[types.UID]*corev1.Pod, len(snap.Pods))
	for _, p := range snap.Pods {
		if p == nil {
			continue
		}
		now[p.UID] = p
		old, ok := prev[p.UID]
		switch {
		case !ok:
			l.line("pod added", snap.Source, p)
		case changed(old, p):
			l.line("pod updated", snap.Source, p)
		}
	}
	for uid, p := range prev {
		if _, ok := now[uid]; !ok {
			l.line("pod removed", snap.Source, p)
		}
	}
	l.last[snap.Source] = now
}

func (l *sourceLog) line(msg, source string, p *corev1.Pod) {
	fields := []zap.Field{zap.String("pod", p.Namespace+"/"+p.Name), zap.String("podUID", string(p.UID)), zap.String("source", source)}
	if p.DeletionTimestamp != nil {
		fields = append(fields, zap.Time("deletionTimestamp", p.DeletionTimestamp.Time))
	}
	l.log.Info(msg, fields...)
}

// changed reports a change of old to p that the node acts on.
func changed(old, p *corev1.Pod) bool {
	if old == p {
		return false
	}
	return !apiequality.Semantic.DeepEqual(old.Spec, p.Spec) ||
		!apiequality.Semantic.DeepEqual(old.Labels, p.Labels) ||
		!apiequality.Semantic.DeepEqual(old.Annotations, p.Annotations) ||
		(old.DeletionTimestamp == nil) != (p.DeletionTimestamp == nil)
}
