package cri

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func writeCRILog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const criLogTime = "2024-05-01T10:00:00.123456789Z"

func TestReadTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	msgFile := filepath.Join(dir, "msg")
	if err := os.WriteFile(msgFile, []byte("disk full"), 0o666); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", 5000)+strings.Repeat("z", 96)), 0o666); err != nil {
		t.Fatal(err)
	}
	log := writeCRILog(t,
		criLogTime+" stdout F starting",
		criLogTime+" stderr P panic: ",
		criLogTime+" stderr F boom",
		"garbage line",
		criLogTime+" stderr F",
	)
	fallback, file := corev1.TerminationMessageFallbackToLogsOnError, corev1.TerminationMessageReadFile
	for _, tc := range []struct {
		name      string
		host, log string
		policy    corev1.TerminationMessagePolicy
		exit      int32
		want      string
	}{
		{"file", msgFile, log, file, 1, "disk full"},
		{"file wins over logs", msgFile, log, fallback, 1, "disk full"},
		{"empty file, policy File", empty, log, file, 1, ""},
		{"empty file, exit 0", empty, log, fallback, 0, ""},
		{"empty file, fallback", empty, log, fallback, 2, "starting\npanic: boom\n\n"},
		{"missing file, fallback", filepath.Join(dir, "none"), log, fallback, 2, "starting\npanic: boom\n\n"},
		{"no file, fallback", "", log, fallback, 2, "starting\npanic: boom\n\n"},
		{"missing file, policy File", filepath.Join(dir, "none"), log, file, 2, ""},
		{"last 4096 bytes", big, "", file, 0, strings.Repeat("a", 4000) + strings.Repeat("z", 96)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReadTerminationMessage(tc.host, tc.log, tc.policy, tc.exit); got != tc.want {
				t.Errorf("= %q, want %q", got, tc.want)
			}
		})
	}
	got := ReadTerminationMessage(empty, filepath.Join(dir, "nolog"), fallback, 1)
	if !strings.HasPrefix(got, "Error on reading termination message from logs: ") {
		t.Errorf("missing log: %q", got)
	}
}

func TestReadTerminationMessageLogTail(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("%s stdout F line %03d", criLogTime, i))
	}
	got := ReadTerminationMessage("", writeCRILog(t, lines...), corev1.TerminationMessageFallbackToLogsOnError, 1)
	if !strings.HasPrefix(got, "line 120\n") || !strings.HasSuffix(got, "line 199\n") {
		t.Errorf("tail = %q..., want lines 120..199", got[:min(20, len(got))])
	}

	// Long lines: the last 2048 bytes of the last 80 lines.
	lines = lines[:0]
	for i := range 1000 { // > 8 KiB blocks, to read backwards more than once
		lines = append(lines, fmt.Sprintf("%s stderr F %04d%s", criLogTime, i, strings.Repeat("x", 100)))
	}
	got = ReadTerminationMessage("", writeCRILog(t, lines...), corev1.TerminationMessageFallbackToLogsOnError, 137)
	if len(got) != 2048 || !strings.HasSuffix(got, "0999"+strings.Repeat("x", 100)+"\n") {
		t.Errorf("len = %d, suffix %q", len(got), got[max(0, len(got)-20):])
	}
}

func TestTerminationMessageFromStatus(t *testing.T) {
	msg := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(msg, []byte("out of cheese"), 0o666); err != nil {
		t.Fatal(err)
	}
	st := func(state runtimeapi.ContainerState, path string) *runtimeapi.ContainerStatus {
		return &runtimeapi.ContainerStatus{State: state, ExitCode: 1, Message: "runtime says",
			Annotations: map[string]string{AnnotationTerminationMessagePath: path},
			Mounts:      []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: msg}}}
	}
	if got := TerminationMessage(st(runtimeapi.ContainerState_CONTAINER_EXITED, "/dev/termination-log")); got != "out of cheese" {
		t.Errorf("exited: %q", got)
	}
	if got := TerminationMessage(st(runtimeapi.ContainerState_CONTAINER_RUNNING, "/dev/termination-log")); got != "runtime says" {
		t.Errorf("running: %q", got)
	}
	if got := TerminationMessage(st(runtimeapi.ContainerState_CONTAINER_EXITED, "/other")); got != "runtime says" {
		t.Errorf("no mount at the annotated path: %q", got)
	}
}
