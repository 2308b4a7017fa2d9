package sim

import (
	"reflect"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A container without SIM_* variables shares defaultBehaviour, which must
// be what its variables' defaults, given explicitly, script.
func TestDefaultBehaviourIsTheDefaults(t *testing.T) {
	b, err := parseBehaviour([]*runtimeapi.KeyValue{{Key: "PATH", Value: []byte("/bin")}})
	if err != nil || b != &defaultBehaviour {
		t.Fatalf("parseBehaviour without SIM_* variables = %p, %v; want defaultBehaviour (%p)", b, err, &defaultBehaviour)
	}
	explicit, err := parseBehaviour([]*runtimeapi.KeyValue{
		{Key: EnvExitCode, Value: []byte("0")},
		{Key: EnvStopExitCode, Value: []byte("0")},
		{Key: EnvStopDelay, Value: []byte("0s")},
		{Key: EnvExecExitCode, Value: []byte("0")},
		{Key: EnvHTTPStatus, Value: []byte("200")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if explicit == &defaultBehaviour || !reflect.DeepEqual(*explicit, defaultBehaviour) {
		t.Fatalf("defaults given explicitly: %+v, want a copy of defaultBehaviour %+v", *explicit, defaultBehaviour)
	}
}
