package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"k8s.io/client-go/util/flowcontrol"
)

// respawnPod asks the Supervisor to start a stopped PodActor again.
type respawnPod struct{ uid string }

// respawner keeps the Supervisor from losing a pod whose PodActor failed
// more often than podStrategy allows and was stopped by protoactor: the
// pod's runtime objects and its admission stay as they are, and after a
// per-pod back-off (client-go's flowcontrol.Backoff on Deps.Clock) a new
// actor reloads the pod from the journal, asks for its desired state and
// lists the runtime, as a restarted one does. While a pod waits, inputs
// for it are dropped: the new actor asks for the latest of each.
type respawner struct {
	backoff *flowcontrol.Backoff
	// waiting: pods whose actor stopped, until it is started again.
	waiting map[string]bool
	counts  map[string]int
}

func newRespawner(d *Deps) *respawner {
	b := flowcontrol.NewBackOff(d.RespawnMin, d.RespawnMax)
	b.Clock = d.Clock
	return &respawner{backoff: b, waiting: map[string]bool{}, counts: map[string]int{}}
}

// childStopped is a child's Terminated, queued by the Supervisor to itself
// behind the user messages that were already waiting (see terminated).
type childStopped struct{ who *actor.PID }

// terminated handles a child's end, after every message the child sent
// before it stopped: a PodActor that stopped while still registered for
// its pod did not finish (podRemoved, which a finishing actor sends before
// it stops, unregisters it first), so it is started again after back-off.
// Judged on the Terminated itself, which protoactor delivers ahead of user
// messages, every finished pod whose podRemoved was still queued was taken
// for failed, logged as such and loaded again.
func (s *supervisor) terminated(ctx actor.Context, who *actor.PID) {
	if s.stopping || who == nil {
		return
	}
	uid, ok := podOf(ctx.Self(), who)
	if !ok {
		return
	}
	if pid, ok := s.pods[uid]; !ok || pid.Id != who.Id {
		return // it finished (podRemoved) or was replaced
	}
	delete(s.pods, uid)
	r := s.respawn
	now := s.deps.Clock.Now()
	r.backoff.Next(uid, now)
	after := r.backoff.Get(uid)
	r.waiting[uid] = true
	r.counts[uid]++
	_, wish, _ := s.wish(uid)
	pod := wish.pod // nil when no source wants it
	fields := []zap.Field{zap.String("podUID", uid), zap.Duration("after", after), zap.Int("respawns", r.counts[uid])}
	if pod != nil {
		fields = append(fields, zap.String("pod", pod.Namespace+"/"+pod.Name))
	}
	s.deps.Logger.Error("pod actor failed too often and was stopped; starting it again after back-off", fields...)
	if s.deps.Respawned != nil {
		s.deps.Respawned.Respawning(pod, uid, after, r.counts[uid])
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.deps.Clock.AfterFunc(after, func() { root.Send(self, &respawnPod{uid: uid}) })
}

// respawned starts the actor of a pod waiting in respawnPod.
func (s *supervisor) respawned(ctx actor.Context, m *respawnPod) {
	if !s.respawn.waiting[m.uid] || s.stopping {
		return
	}
	delete(s.respawn.waiting, m.uid)
	s.spawn(ctx, m.uid, nil, restarted)
}

// forget drops a finished pod's back-off and count.
func (r *respawner) forget(uid string) {
	r.backoff.Reset(uid)
	delete(r.counts, uid)
}
