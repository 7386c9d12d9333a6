package core

import (
	"slices"
	"testing"
)

// BenchmarkW1Rows times the heavy-ball step of W^1's 512 rows (235 stored
// synapses each) with the column copy, and without it.
func BenchmarkW1Rows(b *testing.B) {
	rng := NewRNG(7, StreamRun)
	const nIn, nOut, per = 784, 512, 235
	ld := paddedStride(nOut)
	g := make([]float32, nIn)
	for j := range g {
		g[j] = float32(rng.NormFloat64() * 0.01)
	}
	w := make([]float32, nOut*per)
	v := make([]float32, nOut*per)
	col := make([]uint16, nOut*per)
	for i := range nOut {
		perm := rng.Perm(nIn)[:per]
		slices.Sort(perm)
		for s, j := range perm {
			col[i*per+s] = uint16(j)
		}
	}
	wT := make([]float32, nIn*ld)
	k := &sgdCoef{wd: 1e-3, mu: 0.9, eta: 0.00125, tiny: tinyVelocity}
	b.Run("split", func(b *testing.B) {
		for b.Loop() {
			for i := range nOut {
				r := i * per
				sgdRowInput(w[r:r+per], v[r:r+per], col[r:r+per], g, k)
				copyColumn(wT[i:], w[r:r+per], col[r:r+per], ld)
			}
		}
	})
	b.Run("step-only", func(b *testing.B) {
		for b.Loop() {
			for i := range nOut {
				r := i * per
				sgdRowInput(w[r:r+per], v[r:r+per], col[r:r+per], g, k)
			}
		}
	})
}
