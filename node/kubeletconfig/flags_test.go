package kubeletconfig

import (
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

// upstreamFlag is one flag of the kubelet v1.37.2 (testdata/README.md).
type upstreamFlag struct {
	Name       string `json:"name"`
	Shorthand  string `json:"shorthand"`
	Type       string `json:"type"`
	Default    string `json:"default"`
	Deprecated bool   `json:"deprecated"`
}

// legacyDefaults are the flags whose default the kubelet sets apart from the
// v1beta1 defaults when it runs without --config; actorlet does not (an
// unauthenticated API), so their defaults differ from the upstream dump.
var legacyDefaults = map[string]string{
	"anonymous-auth":               "false",
	"authentication-token-webhook": "true",
	"authorization-mode":           "Webhook",
	"read-only-port":               "0",
}

func upstreamFlags(t *testing.T) []upstreamFlag {
	t.Helper()
	b, err := os.ReadFile("testdata/kubelet-v1.37.2-flags.json")
	if err != nil {
		t.Fatal(err)
	}
	var flags []upstreamFlag
	if err := json.Unmarshal(b, &flags); err != nil {
		t.Fatal(err)
	}
	if len(flags) < 100 {
		t.Fatalf("only %d upstream flags in the testdata", len(flags))
	}
	return flags
}

func kubeletFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddFlags(fs, NewNodeFlags(), Defaults(KubeletProfile), &GlobalFlags{})
	return fs
}

// TestEveryKubeletFlagIsDefined compares the flag set with the kubelet
// v1.37.2's, flag by flag: name, shorthand, type, default and whether it is
// deprecated; and nothing more.
func TestEveryKubeletFlagIsDefined(t *testing.T) {
	fs := kubeletFlagSet()
	want := map[string]bool{}
	for _, u := range upstreamFlags(t) {
		want[u.Name] = true
		f := fs.Lookup(u.Name)
		if f == nil {
			t.Errorf("--%s is a kubelet flag and is not defined", u.Name)
			continue
		}
		def := u.Default
		if d, ok := legacyDefaults[u.Name]; ok {
			def = d
		}
		if f.Shorthand != u.Shorthand || f.Value.Type() != u.Type || f.DefValue != def || (f.Deprecated != "") != u.Deprecated {
			t.Errorf("--%s: shorthand %q type %q default %q deprecated %v; the kubelet's: %q %q %q %v",
				u.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Deprecated != "", u.Shorthand, u.Type, def, u.Deprecated)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !want[f.Name] {
			t.Errorf("--%s is defined but is not a kubelet flag", f.Name)
		}
	})
}

func TestImplementedFlagsAreKubeletFlags(t *testing.T) {
	fs := kubeletFlagSet()
	for _, name := range ImplementedFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("ImplementedFlags names --%s, which is not a kubelet flag", name)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(ImplementedFlags)))) != len(ImplementedFlags) {
		t.Error("ImplementedFlags has duplicates")
	}
}

func TestEveryFlagParses(t *testing.T) {
	// A value of the right form for each type: the whole command line of a
	// kubelet parses.
	sample := map[string]string{
		"bool": "true", "string": "x", "int32": "7", "int64": "7", "duration": "3s", "ip": "10.0.0.1",
		"stringSlice": "a,b", "mapStringString": "a=b", "mapStringBool": "AllAlpha=false",
		"colonSeparatedMultimapStringString": "a:b", "[]v1.Taint": "k=v:NoSchedule", "Level": "2",
		"pattern=N,...": "foo=2", "quantity": "1Ki", "version": "false",
		"reserved-memory": "0:memory=1Gi",
	}
	for _, u := range upstreamFlags(t) {
		v, ok := sample[u.Type]
		if u.Name == "eviction-hard" || u.Name == "eviction-soft" {
			v = "memory.available<1Gi"
		}
		if !ok {
			t.Errorf("no sample value for type %s (--%s)", u.Type, u.Name)
			continue
		}
		fs := kubeletFlagSet()
		if err := fs.Parse([]string{"--" + u.Name + "=" + v}); err != nil {
			t.Errorf("--%s=%s: %v", u.Name, v, err)
		}
	}
}

func TestFlagsAcceptUnderscores(t *testing.T) {
	fs := kubeletFlagSet()
	if err := fs.Parse([]string{"--max_pods=7"}); err != nil {
		t.Fatal(err)
	}
	if !fs.Changed("max-pods") {
		t.Error("--max_pods did not set --max-pods (the kubelet normalizes _ to -)")
	}
}

func TestBareBoolFlags(t *testing.T) {
	fs := kubeletFlagSet()
	var bools []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" {
			bools = append(bools, "--"+f.Name)
		}
	})
	if err := fs.Parse(bools); err != nil {
		t.Fatalf("bare bool flags: %v", err)
	}
	for _, b := range bools {
		if v := fs.Lookup(b[2:]).Value.String(); v != "true" {
			t.Errorf("%s alone set %q, want true", b, v)
		}
	}
}

func TestParseTaint(t *testing.T) {
	for spec, want := range map[string]corev1.Taint{
		"dedicated=gpu:NoSchedule": {Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		"maintenance:NoExecute":    {Key: "maintenance", Effect: corev1.TaintEffectNoExecute},
	} {
		if got, err := ParseTaint(spec); err != nil || got != want {
			t.Errorf("ParseTaint(%q) = %+v, %v", spec, got, err)
		}
	}
	for _, bad := range []string{"dedicated=gpu", "=x:NoSchedule", "k=v:Sometimes", "k=v v:NoSchedule"} {
		if _, err := ParseTaint(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v, want one naming it", bad, err)
		}
	}
}
