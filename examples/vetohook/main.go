// Command vetohook runs an actorlet node on the in-process simulated runtime
// with a lifecycle hook (actors.LifecycleHook, agent.WithLifecycleHook)
// that vetoes pods by a label, and containers by an annotation:
//
//   - at the Accepted stage, a pod carrying the label --label (key=value,
//     default example.com/veto=true) is vetoed: it never gets a sandbox and
//     is Failed with the hook's reason (VetoedByLabel) and message in its
//     status, as a pod an admit handler rejects;
//   - before each container start (BeforeStart), the container named by the
//     pod's annotation example.com/veto-container is vetoed: it stays
//     Waiting with the hook's reason (ContainerVetoed), as a container that
//     cannot be created, and is asked about again after the back-off.
//
// Run it with:
//
//	go run ./examples/vetohook --root-dir /tmp/vh
//
// It starts three pods (web; labelled, carrying example.com/veto=true;
// blocked, whose container helper is vetoed), waits until each has
// settled, prints a line per pod (pod, name, phase, reason, message,
// waiting containers) and the Warning events the node recorded for them
// (event, pod, reason, message), and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/examples/internal/simnode"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/podevents"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// The reasons the hook gives.
const (
	ReasonPod       = "VetoedByLabel"
	ReasonContainer = "ContainerVetoed"
)

// VetoContainer is the annotation naming a container the hook does not let
// start.
const VetoContainer = "example.com/veto-container"

// labelVeto vetoes pods carrying the label key=value when they are
// accepted, and the container a pod's VetoContainer annotation names
// before it starts. It keeps no state: a verdict depends on the pod alone,
// so asking again (a later try) gives the same answer.
type labelVeto struct{ key, value string }

var _ actors.LifecycleHook = labelVeto{}

// Stages implements actors.LifecycleHook.
func (labelVeto) Stages() []lifecycle.Stage {
	return []lifecycle.Stage{lifecycle.StageAccepted, lifecycle.StageBeforeStart}
}

// Hook implements actors.LifecycleHook.
func (h labelVeto) Hook(_ context.Context, s actors.HookStep) lifecycle.Verdict {
	switch s.Stage {
	case lifecycle.StageAccepted:
		if v, ok := s.Pod.Labels[h.key]; ok && v == h.value {
			return lifecycle.Veto(ReasonPod, fmt.Sprintf("pod carries the label %s=%s: this node does not run it", h.key, h.value))
		}
	case lifecycle.StageBeforeStart:
		if s.Pod.Annotations[VetoContainer] == s.Container {
			return lifecycle.Veto(ReasonContainer, fmt.Sprintf("container %s is vetoed by the pod's annotation %s", s.Container, VetoContainer))
		}
	}
	return lifecycle.Continue()
}

// warnings keeps the Warning API events the node records (an
// actors.EventSink beside the API's; podevents.Translate gives the
// kubelet's events of journaled events), one of each pod, reason and
// message.
type warnings struct {
	mu   sync.Mutex
	seen map[string]bool
}

var _ actors.EventSink = (*warnings)(nil)

func (w *warnings) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	if pod == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, env := range events {
		for _, e := range podevents.Translate(pod, env.GetEvent()) {
			if e.Type == corev1.EventTypeWarning {
				w.seen[strings.Join([]string{"event", pod.Name, e.Reason, e.Message}, "\t")] = true
			}
		}
	}
}

func (w *warnings) Acting(*corev1.Pod, lifecycle.Effect) {}

func (w *warnings) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.seen))
	for l := range w.seen {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "vetohook:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("vetohook", flag.ContinueOnError)
	root := fs.String("root-dir", "", "the node's root dir; required")
	label := fs.String("label", "example.com/veto=true", "key=value: pods carrying this label are vetoed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("--root-dir is required")
	}
	key, value, ok := strings.Cut(*label, "=")
	if !ok || key == "" {
		return fmt.Errorf("--label %q: want key=value", *label)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, _ := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))
	pods := []*corev1.Pod{
		examplePod("web", nil, nil, "app"),
		examplePod("labelled", map[string]string{"example.com/veto": "true"}, nil, "app"),
		examplePod("blocked", nil, map[string]string{VetoContainer: "helper"}, "app", "helper"),
	}
	events := &warnings{seen: map[string]bool{}}
	node, err := simnode.Start(ctx, *root, pods, log, agent.WithLifecycleHook(labelVeto{key: key, value: value}), agent.WithEventSink(events))
	if err != nil {
		return err
	}
	defer node.Stop(context.Background())

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	changed, unsubscribe := node.Statuses().Subscribe()
	defer unsubscribe()
	for {
		settled := true
		for _, p := range pods {
			st, ok := node.Statuses().Get(string(p.UID))
			if !ok || !isSettled(st) {
				settled = false
			}
		}
		if settled {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods not settled: %w", ctx.Err())
		case <-changed:
		}
	}
	for _, p := range pods {
		st, _ := node.Statuses().Get(string(p.UID))
		fmt.Printf("pod\t%s\t%s\t%s\t%s\t%s\n", p.Name, st.Status.Phase, st.Status.Reason, st.Status.Message, strings.Join(waiting(st), ","))
	}
	for _, l := range events.lines() {
		fmt.Println(l)
	}
	return nil
}

// isSettled: the pod is Failed, or each of its containers runs or waits
// with a reason of the hook's.
func isSettled(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil && (cs.State.Waiting == nil || cs.State.Waiting.Reason != ReasonContainer) {
			return false
		}
	}
	return true
}

// waiting lists the pod's waiting containers as name=reason.
func waiting(p *corev1.Pod) []string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			out = append(out, cs.Name+"="+w.Reason)
		}
	}
	return out
}

func examplePod(name string, labels, annotations map[string]string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("vetohook-" + name),
			Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
			Name: c, Image: "example.com/" + c + ":1", ImagePullPolicy: corev1.PullIfNotPresent})
	}
	return p
}
