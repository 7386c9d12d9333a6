package experiments

import (
	"repro/presets"
	"repro/stages"
)

// LoadPresets parses and checks the reference configurations
// (presets/presets.toml, built into the binary) of every
// registered learner (stages.PresetLearners).
func LoadPresets() (*presets.Set, error) {
	return presets.Builtin(stages.PresetLearners()...)
}
