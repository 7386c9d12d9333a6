package core

import (
	"slices"
	"strings"
	"testing"
)

// TestPresetsRun: every reference configuration of presets.toml resolves,
// validates, and runs a few batches (on tiny data, with its own substrate
// widths), on its own protocol and on the static one.
func TestPresetsRun(t *testing.T) {
	t.Parallel()
	names, err := testPresetNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 100 {
		t.Fatalf("%d local presets, want the paper's ~120", len(names))
	}
	train := tinyData(1, 8, 4, 4, 5)
	eval := tinyData(2, 4, 4, 4, 5)
	for _, run := range slices.Concat(names, []string{"static:g16_sgd_refr_s10_w512", "static:g17_sgd_none_s10"}) {
		name, static := strings.CutPrefix(run, "static:")
		cfg, err := testPreset(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cfg.Static = cfg.Static || static
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
	if _, err := testPreset("g99_nonsense"); err == nil {
		t.Error("unknown name accepted")
	}
	cfg, _ := testPreset("g27_stream_mirror")
	if cfg.Epochs != 1 || cfg.Mask != "mirror" {
		t.Errorf("single-pass mirror resolved to %+v", cfg)
	}
	// The reference's phase-17 mirror and soft dicts set only the mask:
	// masked Adam at 1e-3, sequential and single pass.
	for _, name := range []string{"g17_mirror_s10", "g27_stream_mirror", "g17_soft_s10", "g27_stream_soft"} {
		cfg, _ := testPreset(name)
		if cfg.Opt != "adam" || cfg.Eta != 1e-3 {
			t.Errorf("%s: opt %q eta %g, want adam 1e-3", name, cfg.Opt, cfg.Eta)
		}
	}
	cfg, _ = testPreset("g17_night_nb16_s10")
	if cfg.BatchWake != 256 || cfg.NightBatch != 16 {
		t.Errorf("night at batch 16: waking batch %d, night batch %d; want 256, 16", cfg.BatchWake, cfg.NightBatch)
	}
	if cfg, _ := testPreset("g16_ctx_none_s10_w512_static"); !cfg.Static || cfg.Buffer != 0 || cfg.Schedule != "offline" {
		t.Errorf("the no-replay row's static twin resolved to %+v", cfg)
	}
	cfg, _ = testPreset("g17_night_s10")
	if cfg.Schedule != "offline" || !cfg.Night || cfg.Opt != "adam" || cfg.BatchWake != 256 {
		t.Errorf("night resolved to %+v", cfg)
	}
}
