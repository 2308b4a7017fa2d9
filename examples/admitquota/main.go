// Command admitquota runs an actorlet node on the in-process simulated
// runtime with an admit handler (actors.Admitter, agent.WithAdmitHandler)
// that enforces a node-local quota of a custom extended resource,
// example.com/widget: a pod whose widget requests, added to those of the
// pods already admitted, exceed --quota is rejected, as the kubelet rejects
// a pod that does not fit (Failed, with the handler's reason and message in
// its status, and never a sandbox).
//
//	go run ./examples/admitquota --root-dir /tmp/aq --quota 3
//
// It starts three pods asking for 2, 1 and 2 widgets, prints each pod's
// phase, reason and message once all are settled (Running or Failed), and
// exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/examples/internal/simnode"
	"github.com/actorlet/actorlet/node/agent"
)

// Widget is the custom extended resource the quota counts.
const Widget corev1.ResourceName = "example.com/widget"

// Reason is the pod status reason of a pod rejected by the quota.
const Reason = "OutOfwidget"

// widgetQuota admits pods while the widgets requested by all admitted pods
// stay within quota. It implements actors.Admitter: called from the node's
// supervisor, in the order pods arrive, with the pods it has admitted and
// that have not finished.
type widgetQuota struct{ quota int64 }

var _ actors.Admitter = widgetQuota{}

// Admit implements actors.Admitter.
func (q widgetQuota) Admit(pod *corev1.Pod, admitted []*corev1.Pod) (reason, message string) {
	want := widgets(pod)
	if want == 0 {
		return "", ""
	}
	var used int64
	for _, p := range admitted {
		used += widgets(p)
	}
	if used+want > q.quota {
		return Reason, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d (node-local quota)",
			Widget, want, used, q.quota)
	}
	return "", ""
}

// widgets is what pod requests of Widget (containers, init containers and
// overhead, as the scheduler counts).
func widgets(pod *corev1.Pod) int64 {
	q := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[Widget]
	return q.Value()
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "admitquota:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("admitquota", flag.ContinueOnError)
	root := fs.String("root-dir", "", "the node's root dir; required")
	quota := fs.Int64("quota", 3, "how many "+string(Widget)+" the node's admitted pods may request together")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("--root-dir is required")
	}
	if *quota < 0 {
		return fmt.Errorf("--quota %d: want 0 or more", *quota)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, _ := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))
	pods := []*corev1.Pod{widgetPod("small", 2), widgetPod("medium", 1), widgetPod("large", 2)}
	node, err := simnode.Start(ctx, *root, pods, log, agent.WithAdmitHandler(widgetQuota{quota: *quota}))
	if err != nil {
		return err
	}
	defer node.Stop(context.Background())

	// Wait until every pod has settled, then print them.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	changed, unsubscribe := node.Statuses().Subscribe()
	defer unsubscribe()
	for {
		settled := true
		for _, p := range pods {
			st, ok := node.Statuses().Get(string(p.UID))
			if !ok || (st.Status.Phase != corev1.PodRunning && st.Status.Phase != corev1.PodFailed) {
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
		fmt.Printf("%s\t%d\t%s\t%s\t%s\n", p.Name, widgets(p), st.Status.Phase, st.Status.Reason, st.Status.Message)
	}
	return nil
}

// widgetPod is a pod whose one container requests n widgets (an extended
// resource: its request equals its limit).
func widgetPod(name string, n int64) *corev1.Pod {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("admitquota-" + name)},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, Containers: []corev1.Container{{
			Name: "app", Image: "example.com/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{Widget: q}, Limits: corev1.ResourceList{Widget: q}},
		}}},
	}
}
