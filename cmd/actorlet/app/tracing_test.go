package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/node/kubeletconfig"
	"github.com/actorlet/actorlet/node/tracing/tracingtest"
)

// writeTracingConfig writes a KubeletConfiguration whose tracing block is
// block (YAML, indented under "tracing:").
func writeTracingConfig(t *testing.T, block string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntracing:\n"+block), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The tracing block is read, validated as the kubelet validates it
// (component-base's ValidateTracingConfiguration) and acted on: it is not
// listed among the ignored fields.
func TestTracingConfiguration(t *testing.T) {
	cfg := writeTracingConfig(t, "  endpoint: 127.0.0.1:4317\n  samplingRatePerMillion: 250000\n")
	nc, err := resolveArgs(t, kubeletconfig.RunProfile, "--config", cfg, "--hostname-override", "n1")
	if err != nil {
		t.Fatal(err)
	}
	tr := nc.kc.Tracing
	if tr == nil || *tr.Endpoint != "127.0.0.1:4317" || *tr.SamplingRatePerMillion != 250000 {
		t.Fatalf("tracing %+v", tr)
	}
	if slices.ContainsFunc(nc.ignoredFields, func(f string) bool { return strings.HasPrefix(f, "tracing") }) {
		t.Errorf("tracing listed as ignored: %v", nc.ignoredFields)
	}
	for _, tc := range []struct{ block, want string }{
		{"  samplingRatePerMillion: 2000000\n", "tracing.samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million"},
		{"  samplingRatePerMillion: -1\n", "tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive"},
		{"  endpoint: \"http://[::1\"\n", "tracing.endpoint"},
	} {
		_, err := resolveArgs(t, kubeletconfig.RunProfile, "--config", writeTracingConfig(t, tc.block), "--hostname-override", "n1")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tracing %q: error %v, want it to say %q", tc.block, err, tc.want)
		}
	}
}

// `actorlet run` on the simulated runtime with a tracing block exports the
// static pod's spans and the CRI calls to the collector at its endpoint,
// and flushes what is left when it stops.
func TestRunExportsTraces(t *testing.T) {
	c, addr := tracingtest.Start(t)
	cfg := writeTracingConfig(t, "  endpoint: "+addr+"\n  samplingRatePerMillion: 1000000\n")
	manifests, root := t.TempDir(), t.TempDir()
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  containers: [{name: app, image: example.com/app:1}]\n"
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(pod), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	m := runMode
	m.stdout, m.stderr = &out, &out
	done := make(chan error, 1)
	go func() {
		done <- runKubelet(ctx, []string{"--config", cfg, "--container-runtime-endpoint", SimEndpoint, "--root-dir", root,
			"--hostname-override", "node-t", "--pod-manifest-path", manifests, "--healthz-port", "0", "--pod-logs-dir", filepath.Join(root, "logs")}, m)
	}()
	// The batch span processor exports every few seconds.
	deadline := time.Now().Add(30 * time.Second)
	for len(c.Named("runtime.v1.RuntimeService/StartContainer")) == 0 {
		select {
		case err := <-done:
			t.Fatalf("actorlet run ended: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no StartContainer span reached the collector; %d spans did", len(c.Spans()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("actorlet run: %v\n%s", err, out.String())
	}
	syncs := c.Named("syncPod")
	if len(syncs) == 0 {
		t.Fatalf("no syncPod span")
	}
	for _, s := range syncs {
		if s.Resource["host.name"] != "node-t" || s.Attributes["k8s.pod"] != "default/web-node-t" || s.Attributes["k8s.pod.uid"] == "" {
			t.Errorf("syncPod: resource %v attributes %v", s.Resource, s.Attributes)
		}
	}
}
