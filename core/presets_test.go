package core

import "testing"

// TestPresetsRun: every named configuration resolves, validates, and runs
// a few batches (on tiny data, with its own substrate widths).
func TestPresetsRun(t *testing.T) {
	t.Parallel()
	names := LocalPresetNames()
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
	cfg, _ = LocalPreset("g17_night_s10")
	if cfg.Schedule != "offline" || !cfg.Night || cfg.Opt != "adam" || cfg.BatchWake != 256 {
		t.Errorf("night resolved to %+v", cfg)
	}
}
