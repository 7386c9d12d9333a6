package backprop

import (
	"math"
	"slices"
	"testing"

	"repro/core"
)

// TestAdamAgainstFloat64 checks one unmasked step against the textbook
// formula evaluated in float64 (PyTorch Adam with coupled L2).
func TestAdamAgainstFloat64(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(4, 0)
	n := 37
	p, g := randVec(rng, n), randVec(rng, n)
	a := NewAdam(n, 1e-2, 1e-3)
	p0 := slices.Clone(p)
	for step := 1; step <= 2; step++ {
		a.Step(p, slices.Clone(g), a.LR) // a step clears the gradient it takes
	}
	for i := range p {
		// Two steps with the same gradient, recomputed in float64.
		th, m, v := float64(p0[i]), 0.0, 0.0
		for s := 1; s <= 2; s++ {
			gi := float64(g[i]) + 1e-3*th
			m = 0.9*m + 0.1*gi
			v = 0.999*v + 0.001*gi*gi
			mh := m / (1 - math.Pow(0.9, float64(s)))
			den := math.Sqrt(v)/math.Sqrt(1-math.Pow(0.999, float64(s))) + 1e-8
			th -= 1e-2 * mh / den
			_ = mh
		}
		// float32 state: agreement to 1e-6 absolute on O(1) parameters.
		if math.Abs(th-float64(p[i])) > 1e-6 {
			t.Errorf("param %d: %g, float64 formula %g", i, p[i], th)
		}
	}
}

func BenchmarkAdam(b *testing.B) {
	n := 784*512 + 512*256
	rng := core.NewRNG(1, 0)
	p, g := randVec(rng, n), randVec(rng, n)
	a := NewAdam(n, 1e-3, 1e-3)
	for b.Loop() {
		a.Step(p, g, 1e-3) // g is zero after the first step: the same arithmetic
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gparam/s")
}

func randVec(rng *core.RNG, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		if rng.IntN(10) == 0 {
			x[i] = 0
		}
	}
	return x
}
