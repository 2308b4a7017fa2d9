package podspec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// etcHostsPath is where containers see the pod's hosts file.
const etcHostsPath = "/etc/hosts"

// EtcHosts is the content of a pod's /etc/hosts as the kubelet writes it:
//   - a pod on the pod network: the localhost entries, the pod's IPs with
//     its hostname (and <hostname>.<subdomain>.<ns>.svc.<clusterDomain>
//     when it has a subdomain);
//   - a hostNetwork pod: the host's hosts file (hostHosts) as it is;
//
// then the pod's hostAliases.
func EtcHosts(pod *corev1.Pod, podIPs []string, clusterDomain string, hostHosts []byte) []byte {
	var b bytes.Buffer
	if pod.Spec.HostNetwork {
		b.Write(hostHosts)
		if len(hostHosts) > 0 && hostHosts[len(hostHosts)-1] != '\n' {
			b.WriteByte('\n')
		}
	} else {
		b.WriteString("# Kubernetes-managed hosts file.\n")
		b.WriteString("127.0.0.1\tlocalhost\n")
		b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
		b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
		hostname := truncateHostname(orDefault(pod.Spec.Hostname, pod.Name))
		for _, ip := range podIPs {
			if pod.Spec.Subdomain != "" && clusterDomain != "" {
				fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.%s\t%s\n", ip, hostname, pod.Spec.Subdomain, pod.Namespace, clusterDomain, hostname)
			} else {
				fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
			}
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.Bytes()
}

// EtcHostsMount writes the pod's hosts file to <podDir>/etc-hosts and
// returns its mount, or nil when the container mounts /etc/hosts itself
// or the pod has no IP yet (as the kubelet, which then leaves the file to
// the runtime). A hostNetwork pod's file starts from the host's
// /etc/hosts (read with readFile).
func EtcHostsMount(podDir string, pod *corev1.Pod, c *corev1.Container, podIP, clusterDomain string, readFile ReadFileFunc) (*runtimeapi.Mount, error) {
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) == etcHostsPath {
			return nil, nil
		}
	}
	if podIP == "" && !pod.Spec.HostNetwork {
		return nil, nil
	}
	var host []byte
	if pod.Spec.HostNetwork {
		var err error
		if host, err = readFile(etcHostsPath); err != nil {
			return nil, fmt.Errorf("pod %s/%s: the host's %s: %w", pod.Namespace, pod.Name, etcHostsPath, err)
		}
	}
	var ips []string
	if podIP != "" {
		ips = []string{podIP}
	}
	path := filepath.Join(podDir, "etc-hosts")
	if err := os.MkdirAll(podDir, 0o750); err != nil {
		return nil, fmt.Errorf("pod %s/%s: hosts file: %w", pod.Namespace, pod.Name, err)
	}
	if err := writeFileAtomic(path, EtcHosts(pod, ips, clusterDomain, host), 0o644); err != nil {
		return nil, fmt.Errorf("pod %s/%s: hosts file: %w", pod.Namespace, pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// writeFileAtomic replaces path with data (a rename over it), so a
// container reading it never sees half of it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
