package app

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/nodeactor"
)

// clusterOptions are the flags of joining a cluster.
type clusterOptions struct {
	kubeconfig    string
	registerNode  bool
	nodeLabels    map[string]string
	taints        []string
	maxPods       int32
	qps           float32
	burst         int32
	statusUpdate  time.Duration
	statusReport  time.Duration
	leaseSeconds  int32
	port          int32
	address       string
	tlsCertFile   string
	tlsKeyFile    string
	clientCAFile  string
	anonymousAuth bool
}

func (o *clusterOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the node's identity (system:node:<name>); without it the node runs standalone")
	fs.BoolVar(&o.registerNode, "register-node", true, "register the Node with the API server (with --kubeconfig)")
	fs.StringToStringVar(&o.nodeLabels, "node-labels", nil, "labels of the Node when it registers (key=value,...)")
	fs.StringSliceVar(&o.taints, "register-with-taints", nil, "taints of the Node when it registers (key=value:Effect,...)")
	fs.Int32Var(&o.maxPods, "max-pods", 110, "pods this node runs at most (its pods capacity)")
	fs.DurationVar(&o.statusUpdate, "node-status-update-frequency", 10*time.Second, "how often the node status is computed and sent when it changed")
	fs.DurationVar(&o.statusReport, "node-status-report-frequency", 5*time.Minute, "how often the node status is sent when nothing changed")
	fs.Int32Var(&o.leaseSeconds, "node-lease-duration-seconds", 40, "duration of the node's Lease; it is renewed every quarter of it")
	fs.Float32Var(&o.qps, "kube-api-qps", 50, "API requests per second (client-side limit)")
	fs.Int32Var(&o.burst, "kube-api-burst", 100, "API request burst (client-side limit)")
	fs.Int32Var(&o.port, "port", 10250, "port of the authenticated kubelet API (with --kubeconfig; 0: any free port)")
	fs.StringVar(&o.address, "address", "127.0.0.1", "address the kubelet API listens on")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "the kubelet API's serving certificate (none: a self-signed one for the node's name and IP)")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "the serving certificate's key")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "CA bundle that signs the client certificates the kubelet API accepts (the API server's)")
	fs.BoolVar(&o.anonymousAuth, "anonymous-auth", false, "let unauthenticated requests to the kubelet API through (as system:anonymous, still authorized)")
}

// kubeClient is the node's API client, or nil when it runs standalone.
func (o *clusterOptions) kubeClient() (kubernetes.Interface, error) {
	if o.kubeconfig == "" {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = o.qps, int(o.burst)
	cfg.UserAgent = "actorlet/" + Version
	return kubernetes.NewForConfig(cfg)
}

// nodeActorConfig is the NodeActor's timing from the flags.
func (o *clusterOptions) nodeActorConfig() (nodeactor.Config, error) {
	if o.leaseSeconds < 4 || o.statusUpdate <= 0 || o.statusReport < o.statusUpdate {
		return nodeactor.Config{}, fmt.Errorf("--node-lease-duration-seconds %d must be at least 4, --node-status-update-frequency %s positive and --node-status-report-frequency %s not below it",
			o.leaseSeconds, o.statusUpdate, o.statusReport)
	}
	lease := time.Duration(o.leaseSeconds) * time.Second
	return nodeactor.Config{StatusUpdateFrequency: o.statusUpdate, StatusReportFrequency: o.statusReport,
		LeaseDuration: lease, RenewInterval: lease / 4}, nil
}

// taintSpec writes a taint as --register-with-taints takes it.
func taintSpec(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// parseTaints reads --register-with-taints: key=value:Effect or key:Effect.
func parseTaints(specs []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, s := range specs {
		kv, effect, ok := strings.Cut(s, ":")
		key, value, _ := strings.Cut(kv, "=")
		e := corev1.TaintEffect(effect)
		if !ok || key == "" || (e != corev1.TaintEffectNoSchedule && e != corev1.TaintEffectPreferNoSchedule && e != corev1.TaintEffectNoExecute) {
			return nil, fmt.Errorf("--register-with-taints %q: want key=value:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute", s)
		}
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: e})
	}
	return out, nil
}

// machine describes this host to the API server: CPUs and memory as
// capacity and allocatable (nothing reserved yet), maxPods pods.
func machine(nodeName, nodeIP string, maxPods int32) nodeactor.Machine {
	res := corev1.ResourceList{
		corev1.ResourceCPU:  *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourcePods: *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		res[corev1.ResourceMemory] = *resource.NewQuantity(int64(si.Totalram)*int64(si.Unit), resource.BinarySI)
	}
	info := corev1.NodeSystemInfo{
		OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH, KubeletVersion: "v1.37.2-actorlet",
	}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		info.KernelVersion = unix.ByteSliceToString(uts.Release[:])
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				info.OSImage = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/etc/machine-id"); err == nil {
		info.MachineID = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		info.BootID = strings.TrimSpace(string(b))
	}
	return nodeactor.Machine{
		Capacity: res, Allocatable: res.DeepCopy(), Info: info,
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}, {Type: corev1.NodeHostName, Address: nodeName}},
	}
}

// runtimeHealth is the runtime's state for the node's Ready condition: it
// must answer and report RuntimeReady and NetworkReady.
func runtimeHealth(client *cri.Client) func(context.Context) nodeactor.RuntimeHealth {
	return func(ctx context.Context) nodeactor.RuntimeHealth {
		ver, err := client.Version(ctx)
		if err != nil {
			return nodeactor.RuntimeHealth{Err: err}
		}
		h := nodeactor.RuntimeHealth{Name: ver.RuntimeName, Version: ver.RuntimeVersion}
		st, err := client.Status(ctx, false)
		if err != nil {
			h.Err = err
			return h
		}
		for _, c := range st.GetStatus().GetConditions() {
			if !c.Status && (c.Type == "RuntimeReady" || c.Type == "NetworkReady") {
				h.Err = fmt.Errorf("%s is false: %s %s", c.Type, c.Reason, c.Message)
			}
		}
		return h
	}
}
