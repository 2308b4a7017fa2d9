// Command inprocruntime runs an actorlet node on a container runtime of
// its own that lives in the node's process: goRuntime (runtime.go) "runs"
// each container as a goroutine executing a Go function chosen by the
// container's image. It implements serve.Runtime, the CRI v1 servers the
// simulated runtime implements, and is connected without a socket by
// serve.InProcess (here through simnode.StartOn), so the node drives it as
// it drives containerd: sandboxes, containers, statuses, logs, restarts.
//
//	go run ./examples/inprocruntime --root-dir /tmp/ipr
//
// It starts two pods: "hello", whose program prints a line and runs until
// stopped, and "countdown" (restartPolicy Never), whose program prints 3,
// 2, 1 and returns 3. Once hello is Running and countdown Failed, it prints
// each pod's phase and its container's ID, image ID and state as the
// runtime reported them, then the countdown's log, and exits:
//
//	hello	Running	goroutine://container-2	goroutine:example.com/hello:1	running
//	countdown	Failed	goroutine://container-4	goroutine:example.com/countdown:1	terminated 3 Error
//	countdown	log	3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/examples/internal/simnode"
	"github.com/actorlet/actorlet/podspec"
)

// programs are the runtime's "images".
var programs = map[string]Program{
	// hello prints a greeting and runs until it is stopped.
	"example.com/hello:1": func(ctx context.Context, env map[string]string, out io.Writer) int32 {
		fmt.Fprintf(out, "hello from a goroutine, %s\n", env["GREETEE"])
		<-ctx.Done()
		return 0
	},
	// countdown prints COUNT down to 1 and returns EXIT_CODE.
	"example.com/countdown:1": func(ctx context.Context, env map[string]string, out io.Writer) int32 {
		n, _ := strconv.Atoi(env["COUNT"])
		for i := n; i > 0; i-- {
			if ctx.Err() != nil {
				return 143
			}
			fmt.Fprintln(out, i)
		}
		code, _ := strconv.Atoi(env["EXIT_CODE"])
		return int32(code)
	},
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "inprocruntime:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("inprocruntime", flag.ContinueOnError)
	root := fs.String("root-dir", "", "the node's root dir; required")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("--root-dir is required")
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, _ := zap.NewProduction(zap.IncreaseLevel(zap.WarnLevel))

	hello := programPod("hello", "example.com/hello:1", corev1.RestartPolicyAlways, map[string]string{"GREETEE": "actorlet"})
	countdown := programPod("countdown", "example.com/countdown:1", corev1.RestartPolicyNever, map[string]string{"COUNT": "3", "EXIT_CODE": "3"})
	rt := newGoRuntime(programs, "127.0.0.1")
	defer rt.Close()
	node, err := simnode.StartOn(ctx, rt, RuntimeName, abs, []*corev1.Pod{hello, countdown}, log)
	if err != nil {
		return err
	}
	defer node.Stop(context.Background())

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	changed, unsubscribe := node.Statuses().Subscribe()
	defer unsubscribe()
	for {
		h, ok1 := node.Statuses().Get(string(hello.UID))
		c, ok2 := node.Statuses().Get(string(countdown.UID))
		if ok1 && ok2 && h.Status.Phase == corev1.PodRunning && c.Status.Phase == corev1.PodFailed {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods not settled: %w", ctx.Err())
		case <-changed:
		}
	}
	for _, p := range []*corev1.Pod{hello, countdown} {
		st, _ := node.Statuses().Get(string(p.UID))
		if len(st.Status.ContainerStatuses) != 1 {
			return fmt.Errorf("pod %s: %d container statuses, want 1", p.Name, len(st.Status.ContainerStatuses))
		}
		cs := st.Status.ContainerStatuses[0]
		fmt.Printf("%s\t%s\t%s\t%s\t%s\n", p.Name, st.Status.Phase, cs.ContainerID, cs.ImageID, state(cs.State))
	}
	for _, p := range []*corev1.Pod{hello, countdown} {
		b, err := os.ReadFile(filepath.Join(podspec.PodLogDir(abs+"/logs", p), "app", "0.log"))
		if err != nil {
			return fmt.Errorf("pod %s: its log: %w", p.Name, err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if f := strings.SplitN(line, " ", 4); len(f) == 4 {
				fmt.Printf("%s\tlog\t%s\n", p.Name, f[3])
			}
		}
	}
	return nil
}

func state(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %d %s", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason
	}
	return "unknown"
}

// programPod is a pod with one container running the program of image.
func programPod(name, image string, restart corev1.RestartPolicy, env map[string]string) *corev1.Pod {
	c := corev1.Container{Name: "app", Image: image, ImagePullPolicy: corev1.PullIfNotPresent}
	for k, v := range env {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("inprocruntime-" + name)},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{c}},
	}
}
