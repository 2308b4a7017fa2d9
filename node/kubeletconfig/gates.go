package kubeletconfig

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// knownGates returns a feature gate that knows the kubelet v1.37's gates
// with their defaults, pre-release stages and locks (gates_table.go).
func knownGates() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(kubeletGates); err != nil {
		panic("kubelet feature gate table: " + err.Error()) // the table is code
	}
	// The kubelet adds component-base's logging gates itself.
	if err := logsapi.AddFeatureGates(g); err != nil {
		panic("logging feature gates: " + err.Error())
	}
	return g
}

// GatesFor returns the kubelet's feature gates with m set over their
// defaults. Names the kubelet does not know and values a locked gate
// refuses are left out here; ValidateGates reports them. The result is
// shared by every caller with the same m (a fleet's thousand nodes
// resolve one configuration): making the table is milliseconds of CPU.
func GatesFor(m map[string]bool) featuregate.FeatureGate {
	key := gatesKey(m)
	if g, ok := resolvedGates.Load(key); ok {
		return g.(featuregate.FeatureGate)
	}
	g := knownGates()
	for name, on := range m {
		_ = g.SetFromMap(map[string]bool{name: on})
	}
	got, _ := resolvedGates.LoadOrStore(key, featuregate.FeatureGate(g))
	return got.(featuregate.FeatureGate)
}

// resolvedGates are GatesFor's answers by gatesKey. The FeatureGate
// interface has no setters: a shared answer is read only.
var resolvedGates sync.Map

// gatesKey is m in a canonical form: its names sorted, with their values.
func gatesKey(m map[string]bool) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(strconv.FormatBool(m[name]))
		b.WriteByte(',')
	}
	return b.String()
}

// ValidateGates checks m against the kubelet's gates: unknown names and
// locked gates set away from their value are errors.
func ValidateGates(m map[string]bool) error {
	if len(m) == 0 {
		return nil
	}
	return knownGates().SetFromMap(m)
}
