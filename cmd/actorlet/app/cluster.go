package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/actorlet/actorlet/cri"
	"github.com/actorlet/actorlet/node/nodeactor"
)

// nodeActorConfig is the NodeActor's timing from the configuration.
func (nc *nodeConfig) nodeActorConfig() (nodeactor.Config, error) {
	kc := nc.kc
	update, report := kc.NodeStatusUpdateFrequency.Duration, kc.NodeStatusReportFrequency.Duration
	if kc.NodeLeaseDurationSeconds < 4 || report < update {
		return nodeactor.Config{}, fmt.Errorf("nodeLeaseDurationSeconds (--node-lease-duration-seconds) %d must be at least 4, and nodeStatusReportFrequency (--node-status-report-frequency) %s not below nodeStatusUpdateFrequency (--node-status-update-frequency) %s",
			kc.NodeLeaseDurationSeconds, report, update)
	}
	lease := time.Duration(kc.NodeLeaseDurationSeconds) * time.Second
	return nodeactor.Config{StatusUpdateFrequency: update, StatusReportFrequency: report,
		LeaseDuration: lease, RenewInterval: lease / 4}, nil
}

// cgroupRoot is the cgroup the pods go under: cgroupRoot, or "/" when unset
// (the kubelet's "the runtime's default").
func cgroupRoot(kc *kubeletconfigv1beta1.KubeletConfiguration) string {
	if kc.CgroupRoot == "" {
		return "/"
	}
	return kc.CgroupRoot
}

// machine describes this host to the API server: CPUs and memory as
// capacity and allocatable (nothing reserved yet), maxPods pods.
func machine(nodeName string, nodeIPs []net.IP, maxPods int32, rootDir string) nodeactor.Machine {
	res := corev1.ResourceList{
		corev1.ResourceCPU:  *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourcePods: *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		res[corev1.ResourceMemory] = *resource.NewQuantity(int64(si.Totalram)*int64(si.Unit), resource.BinarySI)
	}
	// ephemeral-storage: the size of the filesystem of the root directory,
	// as the kubelet reports its node filesystem (the scheduler places pods
	// that request ephemeral storage only on a node that reports it).
	// The directory may not exist yet: its nearest existing parent's.
	for dir := filepath.Clean(rootDir); ; dir = filepath.Dir(dir) {
		var fs unix.Statfs_t
		if unix.Statfs(dir, &fs) == nil {
			res[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(fs.Blocks)*int64(fs.Bsize), resource.BinarySI)
			break
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	info := corev1.NodeSystemInfo{
		OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH, KubeletVersion: KubernetesVersion,
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
	var addrs []corev1.NodeAddress
	for _, ip := range nodeIPs {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: nodeName})
	return nodeactor.Machine{Capacity: res, Allocatable: res.DeepCopy(), Info: info, Addresses: addrs,
		// The kubelet v1.37 declares it by default (GA): in-place resize
		// of non-sidecar init containers, which the lifecycle core does.
		DeclaredFeatures: []string{"InPlacePodVerticalScalingInitContainers"}}
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
