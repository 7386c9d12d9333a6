package stages

import "repro/presets"

// testPreset resolves a reference config of presets.toml for this
// package's tests.
func testPreset(kind LearnerKind, name string) (any, error) {
	set, err := presets.Builtin(PresetLearners()...)
	if err != nil {
		return nil, err
	}
	return set.Resolve(string(kind), name)
}
