package backprop

import (
	"repro/presets"
)

// testPreset resolves a backprop reference config of presets.toml (the
// experiment matrix's data) for this package's tests, checked by
// Config.Validate; false when the name is unknown or the file is invalid.
// The local table is accepted unchecked.
func testPreset(name string) (Config, bool) {
	set, err := presets.Builtin(presets.Learner{
		Table: "bp",
		New:   func() any { c := DefaultConfig(); return &c },
		Check: func(cfg any) (string, error) { return "", cfg.(*Config).Validate() },
	}, presets.Learner{Table: "local"})
	if err != nil {
		return Config{}, false
	}
	cfg, err := set.Resolve("bp", name)
	if err != nil {
		return Config{}, false
	}
	return *cfg.(*Config), true
}
