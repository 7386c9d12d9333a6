package dataset

import (
	"math"
	"testing"
)

func TestRoundFloat16(t *testing.T) {
	t.Parallel()
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		in, want float32
	}{
		{0, 0},
		{1, 1},
		{-2.5, -2.5},
		{0.1, 0.0999755859375},             // numpy: float16(0.1) = 0.09997559
		{1 + 1.0/2048, 1},                  // half-way between 1 and 1+2^-10: ties to even
		{1 + 3.0/2048, 1 + 2.0/1024},       // half-way, odd below: rounds up
		{65504, 65504},                     // largest half
		{65519, 65504},                     // below the half-way point to 2^16
		{65520, inf},                       // half-way rounds to even = overflow
		{-70000, -inf},                     //
		{1.0 / (1 << 24), 1.0 / (1 << 24)}, // smallest subnormal
		{1.0 / (1 << 25), 0},               // half of it: ties to even (0)
		{3.0 / (1 << 25), 2.0 / (1 << 24)}, // 1.5 quanta: ties to even (2)
		{6.102e-5, 1.0 / (1 << 14)},        // just under 2^-14, rounds up to the smallest normal
		{6.1e-5, 1023.0 / (1 << 24)},       // largest subnormal
	} {
		if got := RoundFloat16(c.in); got != c.want {
			t.Errorf("RoundFloat16(%g) = %g, want %g", c.in, got, c.want)
		}
	}
	if nan := RoundFloat16(float32(math.NaN())); nan == nan {
		t.Error("NaN did not stay NaN")
	}
}
