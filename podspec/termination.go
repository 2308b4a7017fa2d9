package podspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Termination messages, as the kubelet has them.
const (
	// DefaultTerminationMessagePath is where a container writes its
	// termination message when its spec names no path.
	DefaultTerminationMessagePath = "/dev/termination-log"
)

// terminationMessagePath is where the container writes its termination
// message.
func terminationMessagePath(c *corev1.Container) string {
	if c.TerminationMessagePath == "" {
		return DefaultTerminationMessagePath
	}
	return c.TerminationMessagePath
}

// TerminationMessageFile makes the host file that a container's attempt
// writes its termination message into, and its CRI mount: an empty file
// <podDir>/termination.<container>.<attempt>, mode 0666 whatever the umask
// (any user of the container can write it, as in the kubelet), mounted
// read-write at c.TerminationMessagePath (DefaultTerminationMessagePath
// when empty). podDir is the pod's own directory (volumes.Manager.PodDir:
// <root>/pods/<podUID>), which the pod's TearDown removes.
//
// One file per attempt (the kubelet names it at random; the attempt makes
// a retried creation of the same attempt find the same file). An existing
// file is kept as it is, never truncated: a container of that attempt may
// have written it already.
//
// The file is in the pod's directory itself, where the kubelet puts it two
// directories further down (<podDir>/containers/<container>/<random>): a
// new pod's files are then three inodes (its directory, this file and
// /etc/hosts) instead of five, and allocating inodes is most of what they
// cost (on an ext4 without a journal each allocation skips, one by one,
// the inodes freed in the last minutes). Container names have no dots, so
// the name is no other container's and none of the directory's other
// entries (volumes, plugins, etc-hosts). Readers find the file through
// the container's mount (cri.TerminationMessage), not by this layout.
func TerminationMessageFile(podDir string, pod *corev1.Pod, c *corev1.Container, attempt uint32) (string, *runtimeapi.Mount, error) {
	if podDir == "" {
		return "", nil, fmt.Errorf("pod %s/%s container %q: no pod directory for the termination message", pod.Namespace, pod.Name, c.Name)
	}
	if err := makePodDir(podDir); err != nil {
		return "", nil, fmt.Errorf("pod %s/%s container %q: termination message: %w", pod.Namespace, pod.Name, c.Name, err)
	}
	host := filepath.Join(podDir, "termination."+c.Name+"."+strconv.FormatUint(uint64(attempt), 10))
	if err := createFile(host, os.O_CREATE, 0o666, nil); err != nil {
		return "", nil, fmt.Errorf("pod %s/%s container %q: termination message: %w", pod.Namespace, pod.Name, c.Name, err)
	}
	return host, &runtimeapi.Mount{ContainerPath: terminationMessagePath(c), HostPath: host}, nil
}

// podDirMode is the mode of the pod directory (before the umask, as
// os.MkdirAll made it).
const podDirMode = 0o750

// makePodDir makes podDir with one mkdir (EEXIST is success), where
// os.MkdirAll first walks up with a stat per missing level. The
// directories above it (<root>/pods) are made only when missing.
func makePodDir(podDir string) error {
	err := os.Mkdir(podDir, podDirMode)
	if errors.Is(err, fs.ErrNotExist) {
		err = os.MkdirAll(podDir, podDirMode)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
