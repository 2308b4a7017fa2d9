package kubeletconfig

import (
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
// refuses are left out here; ValidateGates reports them.
func GatesFor(m map[string]bool) featuregate.FeatureGate {
	g := knownGates()
	for name, on := range m {
		_ = g.SetFromMap(map[string]bool{name: on})
	}
	return g
}

// ValidateGates checks m against the kubelet's gates: unknown names and
// locked gates set away from their value are errors.
func ValidateGates(m map[string]bool) error {
	if len(m) == 0 {
		return nil
	}
	return knownGates().SetFromMap(m)
}
