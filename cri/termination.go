package cri

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Termination messages, as the kubelet reads them.
const (
	// AnnotationTerminationMessagePath and AnnotationTerminationMessagePolicy
	// carry a container's terminationMessagePath and Policy (the kubelet's
	// container annotations): an exited container's message is read from
	// the mount at that path.
	AnnotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	AnnotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	// maxTerminationMessage: only the last 4 KiB of the file are read.
	maxTerminationMessage = 4096
	// FallbackToLogsOnError takes the last 80 lines of the log, of which
	// the last 2 KiB.
	maxTerminationLogLines = 80
	maxTerminationLogBytes = 2048
)

// TerminationMessage is the termination message of an exited container
// from its status: read from the host file mounted at the path its
// annotation names (ReadTerminationMessage), else the runtime's message.
func TerminationMessage(st *runtimeapi.ContainerStatus) string {
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
		return st.GetMessage()
	}
	path := st.GetAnnotations()[AnnotationTerminationMessagePath]
	policy := corev1.TerminationMessagePolicy(st.GetAnnotations()[AnnotationTerminationMessagePolicy])
	if path == "" {
		return st.GetMessage()
	}
	host := ""
	for _, m := range st.GetMounts() {
		if m.GetContainerPath() == path {
			host = m.GetHostPath()
		}
	}
	if msg := ReadTerminationMessage(host, st.GetLogPath(), policy, st.GetExitCode()); msg != "" {
		return msg
	}
	return st.GetMessage()
}

// ReadTerminationMessage is the termination message of an exited
// container, as the kubelet reads it: the last 4096 bytes of its
// termination-message file (hostPath). With policy FallbackToLogsOnError,
// a non-zero exit code and a file that is empty or missing (or no
// hostPath), it is instead the tail of the container's CRI log (logPath):
// the text of its last 80 lines, of which the last 2048 bytes. A file it
// cannot read gives the kubelet's "Error on reading ..." message.
func ReadTerminationMessage(hostPath, logPath string, policy corev1.TerminationMessagePolicy, exitCode int32) string {
	fallback := policy == corev1.TerminationMessageFallbackToLogsOnError && exitCode != 0
	if hostPath != "" {
		data, err := readTail(hostPath, maxTerminationMessage)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Sprintf("Error on reading termination log %s: %v", hostPath, err)
		case len(data) > 0 || !fallback:
			return string(data)
		}
	}
	if !fallback || logPath == "" {
		return ""
	}
	msg, err := lastLogText(logPath, maxTerminationLogLines, maxTerminationLogBytes)
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return msg
}

// readTail reads the last max bytes of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := fi.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && n < len(buf) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// lastLogText is the text of the last lines of a CRI log file (lines
// "<RFC3339Nano time> <stdout|stderr> <P|F>[:...] <text>"; P is a part of
// a line, F ends one), of which the last maxBytes. Lines not in that format
// are skipped, as the kubelet's log reader skips them.
func lastLogText(path string, lines, maxBytes int) (string, error) {
	raw, err := tailLines(path, lines)
	if err != nil {
		return "", err
	}
	var out []byte
	for _, l := range bytes.Split(raw, []byte{'\n'}) {
		text, full, ok := parseCRILogLine(l)
		if !ok {
			continue
		}
		out = append(out, text...)
		if full {
			out = append(out, '\n')
		}
	}
	if len(out) > maxBytes {
		out = out[len(out)-maxBytes:]
	}
	return string(out), nil
}

// tailLines returns the last n lines of a file (without the final
// newline), reading it backwards by blocks.
func tailLines(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const block = 8 << 10
	var buf []byte
	off := fi.Size()
	for off > 0 && bytes.Count(buf, []byte{'\n'}) <= n {
		size := int64(block)
		if off < size {
			size = off
		}
		off -= size
		chunk := make([]byte, size)
		if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		buf = append(chunk, buf...)
	}
	buf = bytes.TrimSuffix(buf, []byte{'\n'})
	all := bytes.Split(buf, []byte{'\n'})
	if off > 0 && len(all) > 0 {
		all = all[1:] // the first one may be cut
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return bytes.Join(all, []byte{'\n'}), nil
}

// parseCRILogLine splits a CRI log line into its text and whether it ends
// a line (tag F rather than P).
func parseCRILogLine(l []byte) (text []byte, full, ok bool) {
	ts, rest, ok := bytes.Cut(l, []byte{' '})
	if !ok {
		return nil, false, false
	}
	if _, err := time.Parse(time.RFC3339Nano, string(ts)); err != nil {
		return nil, false, false
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok || (string(stream) != "stdout" && string(stream) != "stderr") {
		return nil, false, false
	}
	tags, text, _ := bytes.Cut(rest, []byte{' '})
	tag, _, _ := bytes.Cut(tags, []byte{':'})
	switch string(tag) {
	case "F":
		return text, true, true
	case "P":
		return text, false, true
	}
	return nil, false, false
}
