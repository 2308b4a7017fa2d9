package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runEnv makes the test binary run the example (see TestMain), so the test
// needs no go build.
const runEnv = "INPROCRUNTIME_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The node runs its pods on the goroutine runtime: hello is Running and
// countdown Failed with its program's exit code, each container's ID and
// image ID are the runtime's (goroutine://container-N, goroutine:<image>),
// and their logs are what the programs wrote.
func TestPodsRunOnTheInProcessRuntime(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--root-dir", t.TempDir())
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inprocruntime: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("output:\n%s\nwant 2 pod lines and 4 log lines", out.String())
	}
	pods := []*regexp.Regexp{
		regexp.MustCompile(`^hello\tRunning\tgoroutine://container-\d+\tgoroutine:example.com/hello:1\trunning$`),
		regexp.MustCompile(`^countdown\tFailed\tgoroutine://container-\d+\tgoroutine:example.com/countdown:1\tterminated 3 Error$`),
	}
	for i, re := range pods {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %q, want %s", lines[i], re)
		}
	}
	wantLogs := "hello\tlog\thello from a goroutine, actorlet\ncountdown\tlog\t3\ncountdown\tlog\t2\ncountdown\tlog\t1"
	if got := strings.Join(lines[2:], "\n"); got != wantLogs {
		t.Errorf("logs:\n%s\nwant:\n%s", got, wantLogs)
	}
}

// A program that ignores its stop is killed at the grace period: exit 137.
func TestStopContainerKillsAfterTheGracePeriod(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	rt := newGoRuntime(map[string]Program{"stubborn": func(context.Context, map[string]string, io.Writer) int32 {
		<-release
		return 0
	}}, "127.0.0.1")
	defer rt.Close()
	defer close(release)
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "c"}, Image: &runtimeapi.ImageSpec{Image: "stubborn"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.ContainerId, Timeout: 0}); err != nil {
		t.Fatal(err)
	}
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ContainerId})
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Status; s.State != runtimeapi.ContainerState_CONTAINER_EXITED || s.ExitCode != 137 || s.Reason != "Error" {
		t.Errorf("status after stop: %v %d %s, want EXITED 137 Error", s.State, s.ExitCode, s.Reason)
	}
}
