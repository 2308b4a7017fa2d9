package faults

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

// The presets are plan files like any other, embedded.
//
//go:embed presets/*.yaml
var presetFiles embed.FS

// PresetNames are the names Preset and Load accept.
func PresetNames() []string {
	entries, _ := presetFiles.ReadDir("presets")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Preset returns a fresh copy of a named plan:
//   - "none" injects nothing;
//   - "default" injects every kind of fault at rates a correct node agent
//     rides out (restarts in mode keep only, so that it also suits a
//     proxy in front of a real runtime). Its file is presets/default.yaml.
func Preset(name string) (*Plan, error) {
	b, err := PresetYAML(name)
	if err != nil {
		return nil, err
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("fault preset %s: %w", name, err) // a bug, caught by the tests
	}
	return p, nil
}

// PresetYAML returns the file of a named plan.
func PresetYAML(name string) ([]byte, error) {
	if !slices.Contains(PresetNames(), name) {
		return nil, fmt.Errorf("no fault preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	return presetFiles.ReadFile("presets/" + name + ".yaml")
}
