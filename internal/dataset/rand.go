package dataset

import (
	"math/bits"

	"repro/internal/data"
)

// intN returns a uniform integer in [0, n) from r's raw 64-bit output, by
// Lemire's multiply-and-reject method. It is written here rather than taken
// from (*rand.Rand).IntN so that the project's draws are defined by
// core/rng.go's generator and this function alone. It panics if n <= 0.
func intN(r *data.RNG, n int) int {
	if n <= 0 {
		panic("dataset: intN with n <= 0")
	}
	un := uint64(n)
	hi, lo := bits.Mul64(r.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), un)
		}
	}
	return int(hi)
}
