package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// w1Shape draws a W^1-shaped sparse matrix: nOut rows of per stored
// synapses each at random ascending columns below nIn.
func w1Shape(rng *rand.Rand, nIn, nOut, per int) (w []float32, col []uint16, rowPtr []int32) {
	rowPtr = []int32{0}
	for range nOut {
		k := per + rng.IntN(per/8+1) - per/16
		perm := rng.Perm(nIn)[:min(k, nIn)]
		slices.Sort(perm)
		for _, j := range perm {
			col = append(col, uint16(j))
			w = append(w, float32(rng.NormFloat64()*0.05))
		}
		rowPtr = append(rowPtr, int32(len(w)))
	}
	return w, col, rowPtr
}

func TestDriveRowsMatchesGo(t *testing.T) {
	rng := newRNG(3)
	for _, tc := range []struct{ nIn, nOut, per int }{{1, 1, 1}, {5, 3, 2}, {40, 9, 17}, {784, 64, 235}, {1024, 13, 300}} {
		w, col, rowPtr := w1Shape(rng, tc.nIn, tc.nOut, tc.per)
		x := make([]float32, tc.nIn*Lanes)
		for i := range x {
			if rng.Float64() < 0.3 {
				x[i] = float32(rng.NormFloat64())
			}
		}
		// Awkward values: zeros of both signs, subnormals, large.
		x[0] = float32(math.Copysign(0, -1))
		if len(x) > 3 {
			x[1], x[2] = 1e-40, 3e30
		}
		acc := make([]float32, tc.nOut*Lanes)
		for i := range acc {
			acc[i] = float32(rng.NormFloat64())
		}
		want := slices.Clone(acc)
		driveRowsGo(want, w, col, rowPtr, x)
		DriveRows(acc, w, col, rowPtr, x)
		if i := firstBitDiff(acc, want); i >= 0 {
			t.Fatalf("%+v: acc[%d] = %v, want %v", tc, i, acc[i], want[i])
		}
	}
}

// BenchmarkForwardW1 times layer 1's forward product for a batch of 16 on
// W^1's shapes (30% of the synapses stored): MNIST (784 inputs, a quarter
// of each sample's entries off the offset) and CIFAR (1,024 inputs, every
// entry off it), by column (AddTilesBatch over the tiled copy, as drive1
// runs it) and by row (DriveRows, as drive1Rows runs it), in ns per sample.
// useRowForward picks the row-order product for the second shape only.
// The c- runs time c = W^1 o (an offset at every input) both ways.
// TestRowsCheckBounds requires DriveRows and DotRows to refuse, before any
// kernel reads memory, a column past their input and rows out of order.
func TestRowsCheckBounds(t *testing.T) {
	w := []float32{1, 2, 3}
	col := []uint16{0, 2, 5}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	mustPanic("DriveRows column", func() { DriveRows(make([]float32, Lanes), w, col, []int32{0, 3}, make([]float32, 5*Lanes)) })
	mustPanic("DotRows column", func() { DotRows(make([]float32, 1), w, col, []int32{0, 3}, make([]float32, 5)) })
	mustPanic("DriveRows order", func() { DriveRows(make([]float32, 2*Lanes), w, col, []int32{0, 3, 2}, make([]float32, 6*Lanes)) })
	mustPanic("DotRows past w", func() { DotRows(make([]float32, 1), w, col, []int32{0, 4}, make([]float32, 6)) })
	// In bounds: no panic.
	DriveRows(make([]float32, Lanes), w, col, []int32{0, 3}, make([]float32, 6*Lanes))
	DotRows(make([]float32, 1), w, col, []int32{0, 3}, make([]float32, 6))
}
