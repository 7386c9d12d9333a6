//go:build !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDriveRowsKernels runs both vector kernels this CPU has against the
// loop, bit for bit, on rows of 0-40 synapses (joint parts and rests of
// every length) and values with signed zeros, subnormals and large ones.
func TestDriveRowsKernels(t *testing.T) {
	kernels := map[string]func(acc *float32, w *float32, col *uint16, ptr *int32, x *float32){}
	if useAVX2 {
		kernels["avx2"] = driveRows4AVX2
	}
	if useAVX512 {
		kernels["avx512"] = driveRows4AVX512
	}
	if len(kernels) == 0 {
		t.Skip("no vector kernel on this CPU")
	}
	rng := newRNG(11)
	const nIn = 97
	for trial := range 40 {
		nRows := 1 + rng.IntN(11)
		w, col, rowPtr := randomRows(rng, nIn, nRows)
		x := awkwardValues(rng, nIn*Lanes)
		acc0 := make([]float32, nRows*Lanes)
		for i := range acc0 {
			acc0[i] = float32(rng.NormFloat64())
		}
		want := slices.Clone(acc0)
		driveRowsGo(want, w, col, rowPtr, x)
		for name, k := range kernels {
			got := slices.Clone(acc0)
			driveRowsVec(k, got, w, col, rowPtr, x)
			if i := firstBitDiff(got, want); i >= 0 {
				t.Fatalf("trial %d %s: acc[%d] = %v, want %v", trial, name, i, got[i], want[i])
			}
		}
	}
}

// TestDotRowsKernel runs the vector dot products against the loop, bit for
// bit, on rows of 0-40 synapses and inputs with signed zeros, subnormals
// and large values.
func TestDotRowsKernel(t *testing.T) {
	if !useAVX2 {
		t.Skip("no vector kernel on this CPU")
	}
	rng := newRNG(12)
	const nIn = 61
	for trial := range 60 {
		nRows := 1 + rng.IntN(13)
		w, col, rowPtr := randomRows(rng, nIn, nRows)
		o := awkwardValues(rng, nIn)
		want := make([]float32, nRows)
		got := make([]float32, nRows)
		dotRowsGo(want, w, col, rowPtr, o)
		DotRows(got, w, col, rowPtr, o)
		if i := firstBitDiff(got, want); i >= 0 {
			t.Fatalf("trial %d: c[%d] = %v, want %v", trial, i, got[i], want[i])
		}
	}
}

// randomRows draws n rows of 0-40 synapses each at random ascending
// columns below nIn, with normal weights: every length of the kernels'
// joint parts and rests.
func randomRows(rng *rand.Rand, nIn, n int) (w []float32, col []uint16, rowPtr []int32) {
	rowPtr = []int32{0}
	for range n {
		perm := rng.Perm(nIn)[:rng.IntN(min(41, nIn+1))]
		slices.Sort(perm)
		for _, j := range perm {
			col = append(col, uint16(j))
			w = append(w, float32(rng.NormFloat64()))
		}
		rowPtr = append(rowPtr, int32(len(w)))
	}
	return w, col, rowPtr
}

// awkwardValues returns n values, a sixth each -0, a subnormal and a
// large one, the rest normal.
func awkwardValues(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(6) {
		case 0:
			x[i] = float32(math.Copysign(0, -1))
		case 1:
			x[i] = 1e-39
		case 2:
			x[i] = float32(rng.NormFloat64() * 1e30)
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	return x
}
