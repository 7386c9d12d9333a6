package core

import (
	"reflect"
	"testing"
)

// TestSubstratePresets pins the ladder's structure: every row on the
// fit_cortex protocol, and each cumulative step adding exactly its
// ingredient. (A name defined twice in presets.toml is a TOML error.)
func TestSubstratePresets(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"control_w_e3", "base3_w_e3", "kwta10_w_e3", "kwta05_w_e3", "kwta02_w_e3",
		"r4_T5", "r4_T1", "v5_base", "c4_d30_rand", "c4_d30_dist", "v5_sgd02", "v6_base", "v6_sweep",
		"v6_mirror", "v6_mirror_d3", "v6_nokp", "v6_mult", "v6_spiketrain8"} {
		c, err := testPreset(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Epochs != 30 || c.BatchWake != 256 || c.Buffer != 0 || c.Schedule != "offline" ||
			!reflect.DeepEqual(c.Hidden, []int{256, 128}) {
			t.Errorf("%s: not on the fit_cortex protocol: %+v", name, c)
		}
	}
	get := func(name string) LocalConfig {
		c, _ := testPreset(name)
		return c
	}
	// step returns a with edit applied, to compare with the next row.
	step := func(a LocalConfig, edit func(c *LocalConfig)) LocalConfig {
		a.Hidden = append([]int(nil), a.Hidden...)
		edit(&a)
		return a
	}
	ladderSteps := []struct {
		from, to string
		edit     func(c *LocalConfig)
	}{
		{"control_w_e3", "base3_w_e3", func(c *LocalConfig) { c.Transport, c.Unbounded, c.NoDale = false, false, false }},
		{"base3_w_e3", "kwta10_w_e3", func(c *LocalConfig) { c.NoKWTA = false }},
		{"kwta10_w_e3", "r4_T5", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 5, 0.4 }},
		{"r4_T5", "v5_base", func(c *LocalConfig) { c.ConnDensity = 0.3 }},
		{"v5_base", "v6_base", func(c *LocalConfig) { c.NoBurstGate, c.BaselineEMA = false, 0.01 }},
		{"v6_base", "v6_sweep", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 0, 0 }},
		{"v6_base", "v6_mirror", func(c *LocalConfig) { c.Mirror, c.KPDecay = 20, 0 }},
		{"v6_base", "v6_mult", func(c *LocalConfig) { c.BurstMult = true }},
		{"v6_base", "v6_spiketrain8", func(c *LocalConfig) { c.SpikeTrain = 8 }},
		{"v5_base", "v5_sgd02", func(c *LocalConfig) { c.Opt, c.Eta = "sgd", 0.02 }},
		{"kwta10_w_e3", "r4_T1", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 1, 1 }},
		{"kwta10_w_e3", "c4_d30_rand", func(c *LocalConfig) { c.ConnDensity, c.ConnMode = 0.3, "random" }},
	}
	for _, s := range ladderSteps {
		if got, want := step(get(s.from), s.edit), get(s.to); !reflect.DeepEqual(got, want) {
			t.Errorf("%s -> %s:\n got %+v\nwant %+v", s.from, s.to, got, want)
		}
	}
}
