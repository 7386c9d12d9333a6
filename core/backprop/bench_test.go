package backprop

import (
	"testing"

	"repro/core"
)

// benchmarkStep times one training step of cfg on MNIST-shaped random data
// (784 inputs, 10 classes) with a full buffer, reporting ms per waking
// batch.
func benchmarkStep(b *testing.B, cfg Config, ds *core.Dataset, dense bool) {
	n := ds.N
	r := newRunner(cfg, ds, ds, []core.Task{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, 0, core.Hooks{})
	if dense {
		r.net.SetInputOffset(nil)
	}
	if cfg.Method == MethodLocal {
		r.step = r.newLocal()
	} else {
		r.step = r.newBatch()
	}
	idx := make([]int, cfg.Batch)
	next := 0
	batch := func() []int {
		for k := range idx {
			idx[k] = next % n
			next++
		}
		return idx
	}
	for r.buf.Len() < r.cfg.K {
		r.step(batch())
	}
	for b.Loop() {
		r.step(batch())
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/batch")
}

// gaussianSet is n MNIST-shaped samples (784 inputs, 10 classes) of
// independent standard normal pixels: no background, so the dense input
// path.
func gaussianSet(n int) *core.Dataset {
	const d = 784
	rng := core.NewRNG(1, 0)
	ds := &core.Dataset{X: make([]float32, n*d), Y: make([]int32, n), N: n, D: d, Classes: 10, Height: 28, Width: 28}
	for i := range ds.X {
		ds.X[i] = float32(rng.NormFloat64())
	}
	for i := range ds.Y {
		ds.Y[i] = int32(rng.IntN(10))
	}
	return ds
}

// BenchmarkStep times a step of every backprop method on dense Gaussian
// inputs, and on inputs shaped like standardised MNIST (backgroundSet: a
// per-pixel background in about four fifths of the entries) by the offset
// path and, for comparison, by the dense path.
func BenchmarkStep(b *testing.B) {
	gauss, bg := gaussianSet(4096), backgroundSet(4096, 28, 28, 10, 1)
	for _, name := range []string{"bp_er_1000", "bp_derpp_a0.03_b1.0_w512_ce", "bp_erace_1000", "bp_agem_1000_w512", "bpk_er_lr3e5", "bpk_iso_rot_lr1e4"} {
		cfg, _ := testPreset(name)
		b.Run(name, func(b *testing.B) { benchmarkStep(b, cfg, gauss, false) })
		b.Run(name+"/background/offset", func(b *testing.B) { benchmarkStep(b, cfg, bg, false) })
		b.Run(name+"/background/dense", func(b *testing.B) { benchmarkStep(b, cfg, bg, true) })
	}
	// The decomposition's sparse-wiring cell (512-256, 30% distance-
	// dependent wiring, 10% k-WTA): the cost of re-zeroing after each step.
	cfg, _ := testPreset("bp_er_1000")
	cfg.Hidden, cfg.Conn, cfg.KWTA = []int{512, 256}, 0.3, 0.1
	b.Run("w512_conn30_kwta10", func(b *testing.B) { benchmarkStep(b, cfg, gauss, false) })
	cfg.Conn = 0
	b.Run("w512_kwta10", func(b *testing.B) { benchmarkStep(b, cfg, gauss, false) })
}
