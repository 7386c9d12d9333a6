package backprop

import (
	"testing"

	"repro/core"
)

func TestSmoke(t *testing.T) {
	train, eval := blobs(2000, 32, 6, 1), blobs(600, 32, 6, 2)
	for _, name := range []string{"bp_er_1000", "static_bp_none", "bp_derpp_a0.03_b1.0_w512_ce", "bp_erace_1000", "bp_agem_1000_w512", "bpk_er_lr3e5", "bpk_iso_rot_lr1e4"} {
		cfg, _ := Preset(name)
		cfg.Epochs = 2
		tasks := pairTasks(6)
		if name == "static_bp_none" {
			tasks = []core.Task{{0, 1, 2, 3, 4, 5}}
		}
		res, err := Train(cfg, train, eval, tasks, 0, core.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: final %.3f forget %.3f acc %v replay %d asleep %v rho %v", name, res.FinalAcc, res.Forgetting, res.Acc, res.ReplayUpdates, res.AsleepFrac, res.Rho)
	}
}
