package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A container with SIM_CAT_FILES prints the files it sees through its
// mounts to its log when it starts; what it cannot see is an error line.
func TestCatFilesPrintsFilesThroughMounts(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{Clock: newFakeClock()})
	img := pull(t, ctx, rt, "busybox")
	cfg := podConfig("web", "uid-1", 0)
	cfg.LogDirectory = t.TempDir()
	vol, nested := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(vol, "greeting"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, "greeting"), []byte("nested"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := runPod(t, ctx, rt, cfg)
	cc := containerConfig("app", img, EnvCatFiles, "/data/greeting, /data/sub/greeting,/data/missing,/etc/passwd")
	cc.Mounts = []*runtimeapi.Mount{
		{ContainerPath: "/data", HostPath: vol},
		{ContainerPath: "/data/sub/", HostPath: nested}, // the longer prefix wins
	}
	id := createContainer(t, ctx, rt, sb, cfg, cc)
	startContainer(t, ctx, rt, id)

	b, err := os.ReadFile(filepath.Join(cfg.LogDirectory, "app", "0.log"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		ts, rest, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(ts, "20") {
			t.Errorf("line %q: no timestamp", line)
		}
		got = append(got, rest)
	}
	want := []string{
		"stdout F hello", "stdout F world", "stdout F nested",
		"stderr F cat: /data/missing: no such file or directory",
		"stderr F cat: /etc/passwd: no such file or directory (no mount)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCatFilesWantsAbsolutePaths(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	img := pull(t, ctx, rt, "busybox")
	cfg := podConfig("web", "uid-1", 0)
	sb := runPod(t, ctx, rt, cfg)
	for _, v := range []string{"data/x", "/data/../etc/passwd"} {
		_, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb,
			Config: containerConfig("app", img, EnvCatFiles, v), SandboxConfig: cfg})
		wantCode(t, err, 3 /* InvalidArgument */, "CreateContainer with "+EnvCatFiles+"="+v)
	}
}
