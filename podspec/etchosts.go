package podspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	data := EtcHosts(pod, ips, clusterDomain, host)
	// The pod directory is there already (a container's termination
	// message file is made first): it is made only when the write finds
	// it missing.
	err := writeHostsFile(path, data, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = makePodDir(podDir); err == nil {
			err = writeHostsFile(path, data, 0o644)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: hosts file: %w", pod.Namespace, pod.Name, err)
	}
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// writeHostsFile makes path hold data with mode, so that a container
// mounting it never reads half of it:
//   - no file yet: it is created and written in place (O_EXCL). No
//     container mounts it before this call returned for one of them, and
//     a write cut short (a crash, a concurrent call of another container
//     of the pod) leaves a file that the next call finds different;
//   - a file with the same contents and mode: left as it is (the pod's
//     other containers, a retried creation);
//   - a different one: replaced by a rename over it (writeFileAtomic).
//
// The first container of a pod so costs one file creation, and each
// further one a read instead of a new file and a freed one.
func writeHostsFile(path string, data []byte, mode os.FileMode) error {
	err := createFile(path, os.O_CREATE|os.O_EXCL, mode, data)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	if same, err := sameFile(path, data, mode); err != nil || same {
		return err
	}
	return writeFileAtomic(path, data, mode)
}

// sameFile reports whether path is a regular file holding data with mode
// (false, nil when it is not, or is gone).
func sameFile(path string, data []byte, mode os.FileMode) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != mode.Perm() || fi.Size() != int64(len(data)) {
		return false, nil
	}
	b := make([]byte, len(data)+1)
	n, err := io.ReadFull(f, b)
	if err != io.ErrUnexpectedEOF && err != nil {
		return false, err
	}
	return bytes.Equal(b[:n], data), nil
}

// writeFileAtomic replaces path with data (a rename over it), so a
// container reading it never sees half of it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
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
