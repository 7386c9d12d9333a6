package experiments

import (
	"repro/experiments/presets"
	"repro/stages"
)

// PresetLearners are the learner tables of presets.toml: one per
// registered learner kind (stages.Learners), checked by the learner's own
// Validate.
func PresetLearners() []presets.Learner {
	var out []presets.Learner
	for _, l := range stages.Learners() {
		validate := l.Validate
		out = append(out, presets.Learner{
			Table: string(l.Kind),
			New:   l.NewConfig,
			Check: func(cfg any) (string, error) {
				err := validate(cfg)
				return stages.FieldOf(err), err
			},
		})
	}
	return out
}

// LoadPresets parses and checks the reference configurations
// (experiments/presets/presets.toml, built into the binary).
func LoadPresets() (*presets.Set, error) {
	return presets.Builtin(PresetLearners()...)
}
