package kernels

import (
	"math"
	"math/rand/v2"
)

// newRNG returns the tests' seeded random source. The tests compare each
// vector kernel with its loop on the same draws, so any source will do.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6b65726e656c73)) }

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// firstBitDiff returns the first index where a and b (of equal length)
// differ in their bits, or -1.
func firstBitDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
