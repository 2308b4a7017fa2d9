package sim

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	crisim "github.com/actorlet/actorlet/cri/sim"
)

// Kind is a kind of pod in the seeded workload.
type Kind string

// The workload's pod kinds. The simulated runtime scripts each container
// with its SIM_* variables (crisim.EnvExitAfter, EnvExitCode).
const (
	// Steady runs one container until it is deleted.
	Steady Kind = "steady"
	// CrashLoop's container exits with code 1 after 15-60 s and is
	// restarted with back-off (restartPolicy Always).
	CrashLoop Kind = "crashloop"
	// JobNever runs to completion once (restartPolicy Never): exit code 0
	// (Succeeded) or 2 (Failed).
	JobNever Kind = "job-never"
	// JobOnFailure runs until it exits with 0 (restartPolicy OnFailure).
	JobOnFailure Kind = "job-onfailure"
	// WithInit runs an init container to completion, then a steady one.
	WithInit Kind = "init"
	// WithSidecar runs a sidecar (an init container with restartPolicy
	// Always) next to a steady container.
	WithSidecar Kind = "sidecar"
	// Graceful is a steady pod with a termination grace period of 1-30 s,
	// always deleted gracefully.
	Graceful Kind = "graceful"
)

var kinds = []struct {
	kind   Kind
	weight int
}{{Steady, 30}, {CrashLoop, 10}, {JobNever, 15}, {JobOnFailure, 10}, {WithInit, 15}, {WithSidecar, 10}, {Graceful, 10}}

// simPod is one pod of the workload and what became of it.
type simPod struct {
	node    *Node
	pod     *corev1.Pod
	kind    Kind
	exit    int32 // JobNever's exit code
	deleted bool  // a deletion was asked for
	gone    bool  // removed from the source
	edited  bool
}

// planWorkload draws the run's pods and schedules their creation, edits and
// deletions over the first 80% of the duration.
func (s *Sim) planWorkload() {
	span := s.opts.Duration * 8 / 10
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	for i := range s.opts.Pods {
		n := s.nodes[s.rand.IntN(len(s.nodes))]
		w := s.rand.IntN(total)
		var kind Kind
		for _, k := range kinds {
			if w < k.weight {
				kind = k.kind
				break
			}
			w -= k.weight
		}
		sp := &simPod{node: n, kind: kind}
		sp.pod = s.makePod(i, kind, sp)
		s.pods = append(s.pods, sp)
		n.workload = append(n.workload, sp)
		s.kindCounts[kind]++
		at := time.Duration(s.rand.Int64N(int64(span) + 1))
		edit := s.rand.IntN(100) < 10 && kind != JobNever && kind != JobOnFailure
		editAt := at + 10*time.Second + time.Duration(s.rand.Int64N(int64(2*time.Minute)))
		del := kind == Graceful || s.rand.IntN(100) < 35
		delAt := at + 5*time.Second + time.Duration(s.rand.Int64N(int64(3*time.Minute)))
		if n.ended {
			continue // not run (Options.OnlyNode): its share is drawn all the same
		}
		n.clock.schedule(s.start.Add(at), func() { n.created++; n.setDesired(sp.pod) })
		if edit {
			n.clock.schedule(s.start.Add(editAt), func() { n.edit(sp) })
		}
		if del {
			n.clock.schedule(s.start.Add(delAt), func() { n.delete(sp) })
		}
	}
}

func (s *Sim) makePod(i int, kind Kind, sp *simPod) *corev1.Pod {
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(s.opts.Seed), i)
	grace := int64(s.rand.IntN(3))
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", kind, i), Namespace: "sim", UID: types.UID(uid)},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			NodeName:                      sp.node.name,
		},
	}
	app := corev1.Container{Name: "app", Image: "registry.example/sim/app:v1", ImagePullPolicy: corev1.PullIfNotPresent}
	secs := func(lo, hi int) string { return fmt.Sprintf("%ds", lo+s.rand.IntN(hi-lo+1)) }
	env := func(c *corev1.Container, kv ...string) {
		for i := 0; i < len(kv); i += 2 {
			c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
	}
	switch kind {
	case CrashLoop:
		env(&app, crisim.EnvExitAfter, secs(15, 60), crisim.EnvExitCode, "1")
	case JobNever:
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		if s.rand.IntN(4) == 0 {
			sp.exit = 2
		}
		env(&app, crisim.EnvExitAfter, secs(5, 40), crisim.EnvExitCode, fmt.Sprint(sp.exit))
	case JobOnFailure:
		pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		env(&app, crisim.EnvExitAfter, secs(5, 40), crisim.EnvExitCode, "0")
	case WithInit:
		init := corev1.Container{Name: "init", Image: "registry.example/sim/init:v1", ImagePullPolicy: corev1.PullIfNotPresent}
		env(&init, crisim.EnvExitAfter, secs(1, 10), crisim.EnvExitCode, "0")
		pod.Spec.InitContainers = []corev1.Container{init}
	case WithSidecar:
		always := corev1.ContainerRestartPolicyAlways
		side := corev1.Container{Name: "sidecar", Image: "registry.example/sim/proxy:v1", ImagePullPolicy: corev1.PullIfNotPresent, RestartPolicy: &always}
		pod.Spec.InitContainers = []corev1.Container{side}
	case Graceful:
		grace = int64(1 + s.rand.IntN(30))
	}
	pod.Spec.Containers = []corev1.Container{app}
	return pod
}

// edit changes the image of the pod's app container (the core restarts it
// with its new spec).
func (n *Node) edit(sp *simPod) {
	if sp.deleted || !n.faultsOn() {
		return
	}
	pod := sp.pod.DeepCopy()
	pod.Spec.Containers[0].Image = "registry.example/sim/app:v2"
	pod.Generation++
	sp.pod, sp.edited = pod, true
	n.edited++
	n.setDesired(pod)
}

// delete deletes the pod gracefully, as the API server does: a deletion
// timestamp and grace period first, and the object's removal once the
// grace period (and a little) is over.
func (n *Node) delete(sp *simPod) {
	if sp.deleted || !n.faultsOn() {
		return
	}
	if _, ok := n.desired[string(sp.pod.UID)]; !ok {
		return // not created yet
	}
	sp.deleted = true
	n.deleted++
	pod := sp.pod.DeepCopy()
	now := metav1.NewTime(n.clock.Now())
	grace := *pod.Spec.TerminationGracePeriodSeconds
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, &grace
	sp.pod = pod
	n.setDesired(pod)
	n.clock.schedule(n.clock.Now().Add(time.Duration(grace)*time.Second+5*time.Second), func() {
		sp.gone = true
		n.removeDesired(string(pod.UID))
	})
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
