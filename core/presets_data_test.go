package core

import (
	"errors"

	"repro/presets"
)

// testPreset resolves a reference config of presets.toml (the experiment
// matrix's data) for core's own tests, checked by LocalConfig.Validate. The
// backprop table is accepted unchecked: core knows no backprop type.
func testPreset(name string) (LocalConfig, error) {
	set, err := presets.Builtin(presets.Learner{
		Table: "local",
		New:   func() any { c := DefaultLocalConfig(); return &c },
		Check: func(cfg any) (string, error) {
			err := cfg.(*LocalConfig).Validate()
			var fe *FieldError
			if errors.As(err, &fe) {
				return fe.Field, err
			}
			return "", err
		},
	}, presets.Learner{Table: "bp"})
	if err != nil {
		return LocalConfig{}, err
	}
	cfg, err := set.Resolve("local", name)
	if err != nil {
		return LocalConfig{}, err
	}
	return *cfg.(*LocalConfig), nil
}

// testPresetNames lists presets.toml's local presets.
func testPresetNames() ([]string, error) {
	set, err := presets.Builtin(presets.Learner{Table: "local", New: func() any { c := DefaultLocalConfig(); return &c }}, presets.Learner{Table: "bp"})
	if err != nil {
		return nil, err
	}
	return set.Names("local"), nil
}
