package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runEnv makes the test binary run the example (see TestMain), so the test
// needs no go build.
const runEnv = "INLINEVOLUME_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The reader's container sees the files the plugin wrote from the volume's
// attributes, through its volumeMount; the pod whose driver has no plugin
// fails to mount with the kubelet's message naming the driver; the
// reader's removal tears its volume down and removes its directory.
func TestInlineVolumeFilesSeenByTheContainer(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--root-dir", t.TempDir())
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inlinevolume: %v\n%s", err, out.String())
	}
	want := strings.Join([]string{
		"reader\tstdout\thello from volumeAttributes",
		"reader\tstdout\thave a nice day",
		"nodriver\tFailedMount\tMountVolume.SetUp failed for volume \"files\" : kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name nosuch.example.com not found in the list of registered CSI drivers",
		"reader\tTearDown\treader/files",
		"reader\tpod directory removed",
	}, "\n") + "\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
