// Command inlinevolume runs an actorlet node on the in-process simulated
// runtime with a volume plugin of its own (volumes.Plugin,
// agent.WithVolumePlugin): the driver files.example.com serves pods'
// CSI ephemeral inline volumes by writing one file per volumeAttribute
// (the key is the file's name, the value its contents) into the volume.
//
//	go run ./examples/inlinevolume --root-dir /tmp/iv
//
// It starts two pods. "reader" mounts a files.example.com volume at /data
// and its container prints /data/greeting and /data/motd to its log when it
// starts (the simulated runtime's SIM_CAT_FILES reads them through the
// container's mounts, as `cat` in the container would). "nodriver" asks for
// a driver no plugin serves and never gets a sandbox: the node reports
// FailedMount naming the driver, as the kubelet does. The command prints
// what the reader's container saw and the nodriver pod's FailedMount
// message, then removes the reader and prints its volume's TearDown:
//
//	reader	stdout	hello from volumeAttributes
//	reader	stdout	have a nice day
//	nodriver	FailedMount	MountVolume.SetUp failed for volume "files" : kubernetes.io/csi: ...
//	reader	TearDown	reader/files
//	reader	pod directory removed
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
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
	"github.com/actorlet/actorlet/cri/sim"
	"github.com/actorlet/actorlet/examples/internal/simnode"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/volumes"
	"github.com/actorlet/actorlet/podspec"
	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Driver is the CSI driver name the plugin is registered under.
const Driver = "files.example.com"

// filesPlugin writes a volume's attributes as files. It implements
// volumes.Plugin: SetUp is called once per volume (again only if a call
// failed or the node was killed before its success was recorded, so it
// rewrites each file whole, through a temporary file and a rename),
// TearDown when the pod is gone (the node then removes the directory).
type filesPlugin struct {
	tornDown chan<- string // told each torn-down volume's pod and name
}

var _ volumes.Plugin = filesPlugin{}

// SetUp implements volumes.Plugin.
func (filesPlugin) SetUp(_ context.Context, v *volumes.InlineVolume) error {
	for name, contents := range v.Attributes {
		if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
			return fmt.Errorf("volumeAttribute %q: not a file name", name)
		}
		tmp := filepath.Join(v.Dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(contents+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(v.Dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// TearDown implements volumes.Plugin: nothing is held outside v.Dir, which
// the node removes.
func (p filesPlugin) TearDown(ctx context.Context, v *volumes.InlineVolume) error {
	select {
	case p.tornDown <- v.PodName + "/" + v.VolumeName:
	case <-ctx.Done():
	}
	return nil
}

// failedMounts keeps each pod's last FailedMount message (an
// actors.EventSink: the node's journaled events, as its API events are).
type failedMounts struct {
	mu   sync.Mutex
	msgs map[string]string
	seen chan struct{}
}

func (f *failedMounts) Recorded(pod *corev1.Pod, events []*pb.Envelope) {
	for _, e := range events {
		sf := e.GetEvent().GetSandboxFailed()
		if pod == nil || sf == nil || sf.GetReason() != actors.ReasonFailedMount {
			continue
		}
		f.mu.Lock()
		f.msgs[pod.Name] = sf.GetMessage()
		f.mu.Unlock()
		select {
		case f.seen <- struct{}{}:
		default:
		}
	}
}

func (*failedMounts) Acting(*corev1.Pod, lifecycle.Effect) {}

func (f *failedMounts) get(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[name]
	return m, ok
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "inlinevolume:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("inlinevolume", flag.ContinueOnError)
	root := flags.String("root-dir", "", "the node's root dir; required")
	if err := flags.Parse(args); err != nil {
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
	reader := filesPod("reader", Driver, map[string]string{"greeting": "hello from volumeAttributes", "motd": "have a nice day"})
	nodriver := filesPod("nodriver", "nosuch.example.com", map[string]string{"greeting": "never written"})
	fm := &failedMounts{msgs: map[string]string{}, seen: make(chan struct{}, 1)}
	tornDown := make(chan string, 1)
	node, err := simnode.Start(ctx, abs, []*corev1.Pod{reader, nodriver}, log, agent.WithVolumePlugin(Driver, filesPlugin{tornDown: tornDown}), agent.WithEventSink(fm))
	if err != nil {
		return err
	}
	defer node.Stop(context.Background())

	// Wait until the reader runs and the nodriver pod failed to mount.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	changed, unsubscribe := node.Statuses().Subscribe()
	defer unsubscribe()
	for {
		st, ok := node.Statuses().Get(string(reader.UID))
		_, failed := fm.get(nodriver.Name)
		if ok && st.Status.Phase == corev1.PodRunning && failed {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods not settled: %w", ctx.Err())
		case <-changed:
		case <-fm.seen:
		}
	}
	// The simulated process wrote its log when it started, before the
	// pod was Running.
	logFile := filepath.Join(podspec.PodLogDir(abs+"/logs", reader), "app", "0.log")
	b, err := os.ReadFile(logFile)
	if err != nil {
		return fmt.Errorf("the reader's log: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		// <time> <stream> <tag> <text>, the CRI log format.
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 {
			return fmt.Errorf("the reader's log: line %q is not in the CRI log format", line)
		}
		fmt.Printf("%s\t%s\t%s\n", reader.Name, f[1], f[3])
	}
	msg, _ := fm.get(nodriver.Name)
	fmt.Printf("%s\t%s\t%s\n", nodriver.Name, actors.ReasonFailedMount, msg)

	// The reader goes: its volume is torn down, then its directory removed.
	node.SetPods("example", []*corev1.Pod{nodriver})
	select {
	case v := <-tornDown:
		fmt.Printf("%s\tTearDown\t%s\n", reader.Name, v)
	case <-ctx.Done():
		return fmt.Errorf("the reader's volume not torn down: %w", ctx.Err())
	}
	// The node removes the directory right after TearDown returns; no
	// event says so, so look until it is gone (or the deadline).
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := os.Stat(filepath.Join(abs, "pods", string(reader.UID)))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the reader's pod directory not removed (%v): %w", err, ctx.Err())
		case <-tick.C:
		}
	}
	fmt.Printf("%s\tpod directory removed\n", reader.Name)
	return nil
}

// filesPod is a pod with one inline CSI volume of driver, mounted at /data,
// whose container prints /data/greeting and /data/motd when it starts.
func filesPod(name, driver string, attrs map[string]string) *corev1.Pod {
	ro := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("inlinevolume-" + name)},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Volumes: []corev1.Volume{{Name: "files", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
				Driver: driver, ReadOnly: &ro, VolumeAttributes: attrs,
			}}}},
			Containers: []corev1.Container{{
				Name: "app", Image: "example.com/app:1", ImagePullPolicy: corev1.PullIfNotPresent,
				Env:          []corev1.EnvVar{{Name: sim.EnvCatFiles, Value: "/data/greeting,/data/motd"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "files", MountPath: "/data", ReadOnly: true}},
			}},
		},
	}
}
