package core

import (
	"fmt"
	"slices"
	"strings"
)

// localPresets maps the reference's config names to their
// variants of the default system. Names marked (inferred) have no script in
// the authors' code: their settings follow the paper's description of the row
// and the reference's config-name conventions.
var localPresets = map[string]func(c *LocalConfig){
	// Component ablation (sequential column).
	"g16_sgd_refr_s10_w512":   func(c *LocalConfig) {},
	"g16_sgd_silent_s10_w512": func(c *LocalConfig) { c.Mask = "silent" },
	"g17_sgd_none_s10":        func(c *LocalConfig) { c.Mask = "none" },
	"g26_ctrl_rot_noiso":      func(c *LocalConfig) { c.NoIso = true },
	"g26_ctrl_readout_only":   func(c *LocalConfig) { c.ReplayReadoutOnly = true },
	"g26_ctrl_random_rot":     func(c *LocalConfig) { c.Mask = "random" },
	// Mirror and soft rotation are phase-17 re-runs of the Adam-era
	// controls: their reference dicts set only the mask, so run_local's
	// defaults apply, masked Adam at eta 1e-3 (the sgd rows beside them say
	// opt="sgd", eta=0.02). They had run heavy-ball SGD at 0.02 here.
	"g17_mirror_s10": func(c *LocalConfig) { c.Mask, c.Opt, c.Eta = "mirror", "adam", 1e-3 },
	"g17_soft_s10":   func(c *LocalConfig) { c.Mask, c.Opt, c.Eta = "soft", "adam", 1e-3 },
	// Optimiser rows (inferred): Adam's default eta is 1e-3.
	"g17_adam_refr_s10":  func(c *LocalConfig) { c.Opt, c.Eta = "adam", 1e-3 },
	"g17_adam_leak_s10":  func(c *LocalConfig) { c.Opt, c.Eta, c.LeakMoments = "adam", 1e-3, true },
	"g17_adam_none_s10":  func(c *LocalConfig) { c.Opt, c.Eta, c.Mask = "adam", 1e-3, "none" },
	"g22b_sgd0_e2_g03":   func(c *LocalConfig) { c.Momentum, c.Eta, c.NremGain = 0, 0.2, 0.3 },
	"g17_sgd_anchor_s10": func(c *LocalConfig) { c.Anchor = []float64{3e-4, 3e-4} },
	// Gates (inferred): gamma 0.5 as in the tables, beta 1.3.
	"g16_sgd_block2048_s10_w512": func(c *LocalConfig) { c.Gate, c.Block, c.GammaP = "refr_block", 2048, 0.5 },
	"g17_sgd_prog05_s10":         func(c *LocalConfig) { c.Gate, c.GammaP = "refr_prog", 0.5 },
	// No replay and the offline nights run the reference's run(): Adam at
	// 1e-3 on waking batches of 256.
	"g17_ctx_none_s10":   offline(false, 512, 256),
	"g17_night_s10":      offline(true, 512, 256),
	"ctx_nrem_rand_1000": offline(true, 256, 128),
	// The reference sets night_batch=16 only: waking batches stay at 256.
	"g17_night_nb16_s10": func(c *LocalConfig) { offline(true, 512, 256)(c); c.NightBatch = 16 },
	// The same night and no-buffer runs on raw split CIFAR-10 (the data set
	// is the stage's choice; eta 0.01 applies to the local schedule only).
	"cif_s10_night":    offline(true, 512, 256),
	"cif_s10_ctx_none": offline(false, 512, 256),
	// Timing, batch-size and gain studies.
	"g17_sgd_br16_night_s10":  func(c *LocalConfig) { c.Night = true },
	"g17_sgd_cad8_br16_s10":   func(c *LocalConfig) { c.Cadence = 8 },
	"g24_sgd_cad2_br16_s10":   func(c *LocalConfig) { c.Cadence = 2 },
	"g17_sgd_burst16_128_s10": func(c *LocalConfig) { c.Cadence, c.Burst = 128, 16 },
	"g17_sgd_pburst16_s10":    func(c *LocalConfig) { c.Gate, c.Theta, c.Burst = "pressure", 6.4, 16 },
	"g17_sgd_sburst16_s10":    func(c *LocalConfig) { c.Gate, c.Theta, c.Burst = "surprise", 10, 16 },
	"g27_refr_K200":           func(c *LocalConfig) { c.Buffer = 200 },
	"g27_refr_K5000":          func(c *LocalConfig) { c.Buffer = 5000 },
	"g16_sgd_refr_s15_w512":   func(c *LocalConfig) { c.ActiveFrac = 0.15 },
	"g16_sgd_refr_s25_w512":   func(c *LocalConfig) { c.ActiveFrac = 0.25 },
	// Diagnostics.
	"g21_diag_free":          func(c *LocalConfig) { c.DiagDrift = true },
	"g21_diag_isolated":      func(c *LocalConfig) { c.DiagDrift, c.Readout = true, "isolated" },
	"g25_diag_postwake_free": func(c *LocalConfig) { c.DiagDrift, c.MaskPostWake = true, true },
	// CIFAR (the data set is the stage's choice): eta 0.01 on raw and
	// feature CIFAR-10 as coded ([CODE≠PAPER]: the appendix says 0.02);
	// fixed-lambda CIFAR-100 cells use kp_decay 1e-4 with tgt_scale 3.
	"cif_s10_sgd_refr":   func(c *LocalConfig) { c.Eta = 0.01 },
	"cif_s10_sgd_none":   func(c *LocalConfig) { c.Eta, c.Mask = 0.01, "none" },
	"cfeat_sgd_refr_s10": func(c *LocalConfig) { c.Eta = 0.01 },
	"cfeat_s10_sgd_none": func(c *LocalConfig) { c.Eta, c.Mask = 0.01, "none" },
	"c100_sgd_refr":      func(c *LocalConfig) { c.KPDecay, c.TgtScale = 1e-4, 3 },
	"c100f_sgd_refr":     func(c *LocalConfig) { c.KPDecay, c.TgtScale = 1e-4, 3 },
	"g19b_cifar":         func(c *LocalConfig) { c.Eta, c.KPAdapt = 0.01, 0.25 },
	"g19b_cifarf":        func(c *LocalConfig) { c.Eta, c.KPAdapt = 0.01, 0.25 },
	"g19b_c100":          func(c *LocalConfig) { c.KPAdapt = 0.25 },
	"g19b_c100f":         func(c *LocalConfig) { c.KPAdapt = 0.25 },
	// Controller and depth (MNIST).
	"g19b_mnist":      func(c *LocalConfig) { c.KPAdapt = 0.25 },
	"g20_d3_kad":      deep([]int{512, 256, 128}, 0.25, false),
	"g20_d4_kad":      deep([]int{512, 256, 128, 128}, 0.25, false),
	"g20_d5_kad":      deep([]int{512, 256, 128, 128, 128}, 0.25, false),
	"g20_d3_fix":      deep([]int{512, 256, 128}, 0, false),
	"g20_d4_fix":      deep([]int{512, 256, 128, 128}, 0, false),
	"g20_d5_fix":      deep([]int{512, 256, 128, 128, 128}, 0, false),
	"g20b_d4_skip":    deep([]int{512, 256, 128, 128}, 0.25, true),
	"g20b_d5_skip":    deep([]int{512, 256, 128, 128, 128}, 0.25, true),
	"g20b_d5_fixskip": deep([]int{512, 256, 128, 128, 128}, 0, true),
}

func offline(night bool, h1, h2 int) func(c *LocalConfig) {
	return func(c *LocalConfig) {
		c.Schedule, c.Night, c.Mask = "offline", night, "none"
		c.Opt, c.Eta, c.BatchWake = "adam", 1e-3, 256
		c.Hidden = []int{h1, h2}
		if !night {
			c.Buffer = 0
		}
	}
}

func deep(hidden []int, rho float64, skip bool) func(c *LocalConfig) {
	return func(c *LocalConfig) { c.Hidden, c.KPAdapt, c.Skip = hidden, rho, skip }
}

// singlePass maps the single-pass names to their sequential base.
var singlePass = map[string]string{
	"g26_stream_refr": "g16_sgd_refr_s10_w512", "g27_stream_silent": "g16_sgd_silent_s10_w512",
	"g26_stream_none": "g17_sgd_none_s10", "g27_stream_rot_noiso": "g26_ctrl_rot_noiso",
	"g27_stream_readout_only": "g26_ctrl_readout_only", "g27_stream_random_rot": "g26_ctrl_random_rot",
	"g26_stream_ctx_none": "g17_ctx_none_s10", "g26_stream_night": "g17_night_s10",
	"g27_stream_night_narrow": "ctx_nrem_rand_1000", "g27_stream_mirror": "g17_mirror_s10",
	"g27_stream_soft": "g17_soft_s10", "cif_stream_sgd_refr": "cif_s10_sgd_refr",
	"cif_stream_sgd_none": "cif_s10_sgd_none", "cif_stream_night": "cif_s10_night",
	"cif_stream_ctx_none": "cif_s10_ctx_none",
}

// LocalPreset returns the configuration of a reference config name:
// a name of the preset tables (localPresets, substratePresets,
// appendixPresets), a single-pass name
// (g26_stream_*, g27_stream_*), or a listed name with the static protocol's
// "_static" suffix or "static_" prefix (g16_ctx_none_s10_w512_static is the
// no-replay row's static twin). Unknown names return an error wrapping
// ErrConfig.
func LocalPreset(name string) (LocalConfig, error) {
	cfg := DefaultLocalConfig()
	base, static := name, false
	switch {
	case strings.HasPrefix(name, "static_"):
		base, static = strings.TrimPrefix(name, "static_"), true
	case strings.HasSuffix(name, "_static"):
		base, static = strings.TrimSuffix(name, "_static"), true
	}
	if base == "g16_ctx_none_s10_w512" {
		base = "g17_ctx_none_s10"
	}
	epochs := 0
	if b, ok := singlePass[base]; ok {
		base, epochs = b, 1
	}
	edit, ok := localPresets[base]
	if !ok {
		edit, ok = substratePresets[base]
	}
	if !ok {
		edit, ok = appendixPresets[base]
	}
	if !ok {
		return cfg, fmt.Errorf("%w: unknown config name %q", ErrConfig, name)
	}
	edit(&cfg)
	cfg.Hidden = slices.Clone(cfg.Hidden) // presets share their literals
	cfg.Anchor = slices.Clone(cfg.Anchor)
	cfg.Static = static
	if epochs > 0 {
		cfg.Epochs = epochs
	}
	return cfg, cfg.Validate()
}
