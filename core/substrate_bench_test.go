package core

import "testing"

// BenchmarkSubstrateStep times one training batch (256 MNIST samples:
// settling or sweep, and the update) of substrate ladder rows on the same
// 256-128 network and protocol, after a warm-up of 20 batches. v6_base
// settles T = 5 steps; v6_sweep is the same network with the single-phase
// sweep, so their ratio is relaxation's cost.
func BenchmarkSubstrateStep(b *testing.B) {
	ds := loadMNISTTrain(b)
	for _, name := range []string{"v6_sweep", "v6_base", "v5_base", "kwta10_w_e3", "control_w_e3", "v6_mirror"} {
		b.Run(name, func(b *testing.B) {
			cfg, err := testPreset(name)
			if err != nil {
				b.Fatal(err)
			}
			cfg.Static = true
			r, err := newLocalRun(&cfg, ds, ds.Subset([]int{0, 1, 2}), nil, 0, Hooks{})
			if err != nil {
				b.Fatal(err)
			}
			eta := cfg.Eta * float64(cfg.BatchWake) / 256
			batch := make([]int, cfg.BatchWake)
			step := 0
			next := func() []int {
				for k := range batch {
					batch[k] = (step*cfg.BatchWake + k*7919) % ds.N
				}
				step++
				return batch
			}
			for range 20 {
				r.wakingStep(next(), eta, 0)
			}
			c0 := processCPU()
			for b.Loop() {
				r.wakingStep(next(), eta, 0)
			}
			b.ReportMetric((processCPU()-c0)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSubstrateRun times a whole short run (one epoch over the first
// 6,000 MNIST training samples in batches of 256, evaluation and metrics on
// 1,000 others) of the final substrate (single-phase sweep) and of the same
// network settling T = 5 steps (v6_base): the relaxation's cost on a run.
func BenchmarkSubstrateRun(b *testing.B) {
	ds := loadMNISTTrain(b)
	idx := make([]int, 6000)
	for i := range idx {
		idx[i] = i
	}
	ev := make([]int, 1000)
	for i := range ev {
		ev[i] = 50000 + i
	}
	train, eval := ds.Subset(idx), ds.Subset(ev)
	for _, name := range []string{"v6_sweep", "v6_base"} {
		b.Run(name, func(b *testing.B) {
			cfg, err := testPreset(name)
			if err != nil {
				b.Fatal(err)
			}
			cfg.Static, cfg.Epochs = true, 1
			c0 := processCPU()
			for b.Loop() {
				if _, err := TrainLocal(cfg, train, eval, nil, 0, Hooks{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((processCPU()-c0)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}
