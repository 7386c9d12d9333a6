package core

import (
	"slices"
	"testing"
)

// TestPresetsRun: every named configuration resolves, validates, and runs
// a few batches (on tiny data, with its own substrate widths).
func TestPresetsRun(t *testing.T) {
	t.Parallel()
	var names []string
	for _, m := range []map[string]func(*LocalConfig){localPresets, substratePresets, appendixPresets} {
		for n := range m {
			names = append(names, n)
		}
	}
	for n := range singlePass {
		names = append(names, n)
	}
	slices.Sort(names)
	names = append(names, "g16_sgd_refr_s10_w512_static", "static_g17_sgd_none_s10", "g16_ctx_none_s10_w512_static")
	train := tinyData(1, 8, 4, 4, 5)
	eval := tinyData(2, 4, 4, 4, 5)
	for _, name := range names {
		cfg, err := LocalPreset(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cfg.Epochs = 1
		cfg.PRSamples = 8
		for i, h := range cfg.Hidden {
			cfg.Hidden[i] = max(8, h/16) // same depth, small widths
		}
		if cfg.BatchWake > 8 {
			cfg.BatchWake = 8
		}
		cfg.NightBatch = min(cfg.NightBatch, 8)
		cfg.NightBatches = min(cfg.NightBatches, 2)
		res, err := TrainLocal(cfg, train, eval, pairTasks(4), 0, Hooks{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.WakingBatches == 0 || len(res.Acc) == 0 {
			t.Errorf("%s: empty result", name)
		}
		if cfg.Schedule == "offline" {
			want := 0
			if cfg.Night {
				want = len(res.Acc) * cfg.NightBatches // one night per epoch
			}
			if res.ReplayUpdates != want {
				t.Errorf("%s: %d replay updates, want %d nights' batches only", name, res.ReplayUpdates, want)
			}
		}
	}
	if _, err := LocalPreset("g99_nonsense"); err == nil {
		t.Error("unknown name accepted")
	}
	cfg, _ := LocalPreset("g27_stream_mirror")
	if cfg.Epochs != 1 || cfg.Mask != "mirror" {
		t.Errorf("single-pass mirror resolved to %+v", cfg)
	}
	// The reference's phase-17 mirror and soft dicts set only the mask:
	// masked Adam at 1e-3, in all three protocols.
	for _, name := range []string{"g17_mirror_s10", "static_g17_mirror_s10", "g27_stream_mirror",
		"g17_soft_s10", "static_g17_soft_s10", "g27_stream_soft"} {
		cfg, _ := LocalPreset(name)
		if cfg.Opt != "adam" || cfg.Eta != 1e-3 {
			t.Errorf("%s: opt %q eta %g, want adam 1e-3", name, cfg.Opt, cfg.Eta)
		}
	}
	cfg, _ = LocalPreset("g17_night_nb16_s10")
	if cfg.BatchWake != 256 || cfg.NightBatch != 16 {
		t.Errorf("night at batch 16: waking batch %d, night batch %d; want 256, 16", cfg.BatchWake, cfg.NightBatch)
	}
	cfg, _ = LocalPreset("g17_night_s10")
	if cfg.Schedule != "offline" || !cfg.Night || cfg.Opt != "adam" || cfg.BatchWake != 256 {
		t.Errorf("night resolved to %+v", cfg)
	}
}
