package dataset

import (
	"math"
)

// RoundFloat16 returns x rounded to the nearest IEEE binary16 value (ties
// to even) and widened back to float32, as numpy's astype(float16) followed
// by astype(float32) does: values of magnitude 65520 and above become ±Inf,
// values below 2^-14 are rounded to a multiple of 2^-24 (subnormals), NaN
// stays NaN.
func RoundFloat16(x float32) float32 {
	if x != x {
		return x
	}
	ax := float32(math.Abs(float64(x)))
	if ax < 1.0/(1<<14) {
		// Subnormal range: a fixed quantum of 2^-24; exact in float64.
		return float32(math.RoundToEven(float64(x)*(1<<24)) / (1 << 24))
	}
	b := math.Float32bits(x)
	// Drop the 13 low mantissa bits with round-half-to-even; a carry
	// propagates into the exponent as it should.
	b += 0x0fff + (b>>13)&1
	b &^= 0x1fff
	r := math.Float32frombits(b)
	if float32(math.Abs(float64(r))) > 65504 {
		return float32(math.Copysign(math.Inf(1), float64(x)))
	}
	return r
}
