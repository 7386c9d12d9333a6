package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ctrlRowCase draws one dense row's state with the edge cases the kernels
// must keep bit for bit: subnormal-bound velocities, signed zeros, steps
// that cross zero, NaN, frozen, excitatory, inhibitory and absent synapses.
func ctrlRowCase(rng *rand.Rand, n int, zeroG, nan bool) (w, fb, v, g []float32, flags, absent []int32) {
	w, fb, v, g = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	flags, absent = make([]int32, n), make([]int32, n)
	for j := range w {
		if !zeroG {
			g[j] = float32(rng.NormFloat64() * 0.01)
		}
		w[j] = float32(rng.NormFloat64() * 0.05)
		fb[j] = float32(rng.NormFloat64() * 0.05)
		v[j] = float32(rng.NormFloat64() * 0.01)
		switch rng.IntN(6) {
		case 0:
			v[j] = float32(rng.NormFloat64() * 1e-31)
		case 1:
			w[j], v[j] = 0, 0
		case 2:
			w[j], fb[j], v[j] = float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), 0
		case 3:
			v[j] = -w[j] / 0.06 / 0.9 // pushes w across zero
		case 4:
			if nan && rng.IntN(8) == 0 {
				v[j] = float32(math.NaN())
			}
		}
		switch rng.IntN(5) {
		case 0:
			flags[j] = FlagInh
		case 1:
		default:
			flags[j] = FlagExc
		}
		if rng.IntN(4) == 0 {
			flags[j] |= FlagFrozen
		}
		if rng.IntN(3) == 0 {
			absent[j] = -1
		}
	}
	return
}

// TestCtrlStepRow checks the controller's optimiser kernel, row state and
// the three float64 sums, against the portable loop bit for bit.
func TestCtrlStepRow(t *testing.T) {
	t.Parallel()
	rng := newRNG(6)
	k := &CtrlCoef{mu: 0.9, eta: 0.06, tiny: TinyVelocity}
	for _, n := range []int{0, 1, 7, 8, 9, 31, 128, 256, 511} {
		for c := range 4 {
			zeroG, nan := c&1 != 0, c&2 != 0
			w, fb, v, g, flags, _ := ctrlRowCase(rng, n, zeroG, nan)
			w2, fb2, v2 := slices.Clone(w), slices.Clone(fb), slices.Clone(v)
			s := CtrlSums{D: [4]float64{0.5, 0, 1e-3, 7}, G: [4]float64{1.25}, W: [4]float64{3, 1, 2, 0.1}}
			s2 := s
			ctrlStepRowGo(w, fb, v, g, flags, k, &s)
			CtrlStepRow(w2, fb2, v2, g, flags, k, &s2)
			if !bitsEqual(w, w2) || !bitsEqual(fb, fb2) || !bitsEqual(v, v2) {
				t.Fatalf("n=%d zeroG=%v nan=%v: kernel state differs from the loop", n, zeroG, nan)
			}
			// A NaN velocity (which cannot arise) makes a sum NaN either way.
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
			}
			if !slices.EqualFunc(s.D[:], s2.D[:], same) || !slices.EqualFunc(s.G[:], s2.G[:], same) || !slices.EqualFunc(s.W[:], s2.W[:], same) {
				t.Fatalf("n=%d zeroG=%v nan=%v: sums %v, loop %v", n, zeroG, nan, s2, s)
			}
		}
	}
}

// TestCtrlSumsPartial pins the order of the controller's sums: synapse j
// of a row adds to partial j mod 4 (across rows and past the vector
// kernel's blocks of 8), and the call's sum is (p0 + p1) + (p2 + p3). With
// 2^53 in partial 0 and 1 in partials 2 and 3, that order gives 2^53 + 2;
// one running sum in synapse order, or (p0 + p2) + (p1 + p3), gives 2^53
// (each +1 to 2^53 is a tie, rounded to even).
func TestCtrlSumsPartial(t *testing.T) {
	t.Parallel()
	const big = 1 << 53
	k := &CtrlCoef{mu: 0.9, eta: 0.06, tiny: TinyVelocity}
	for _, n := range []int{4, 8, 12, 16, 20} {
		for _, at := range []int{0, n - 4} { // the 1s in the row's first or last four
			w := make([]float32, 2*n)
			w[0] = big
			w[n+at+2], w[n+at+3] = 1, 1 // the second row
			fb, v, g := make([]float32, 2*n), make([]float32, 2*n), make([]float32, 2*n)
			flags := make([]int32, n)
			for j := range flags {
				flags[j] = FlagFrozen // no step: the sums see w as it is
			}
			for _, step := range []func(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums){ctrlStepRowGo, CtrlStepRow} {
				var s CtrlSums
				for r := range 2 {
					row := w[r*n : (r+1)*n]
					step(row, fb[r*n:], v[r*n:], g[r*n:], flags, k, &s)
				}
				if _, _, sw := s.Total(); sw != big+2 {
					t.Errorf("n=%d, 1s at %d: |W| sum %.0f, want 2^53 + 2 = %.0f (partials %v)", n, at, sw, float64(big+2), s.W)
				}
			}
			var s CtrlSums
			s.AddW(w[:n])
			s.AddW(w[n:])
			if _, _, sw := s.Total(); sw != big+2 {
				t.Errorf("n=%d, 1s at %d: AddW's |W| sum %.0f, want %.0f", n, at, sw, float64(big+2))
			}
		}
	}
}

// TestCtrlDecayRow checks the controller's decay pass against the portable
// loop bit for bit, with and without lambda and the twin's clamp.
func TestCtrlDecayRow(t *testing.T) {
	t.Parallel()
	rng := newRNG(7)
	for _, n := range []int{0, 1, 7, 8, 9, 31, 128, 511} {
		for _, k := range []DecayCoef{{lam: 0.01, hasLam: 1, clampB: -1}, {lam: 0.02, hasLam: 1}, {clampB: -1}} {
			w, fb, _, _, flags, absent := ctrlRowCase(rng, n, false, true)
			for j := range w {
				if rng.IntN(10) == 0 {
					w[j] = float32(math.NaN())
				}
			}
			w2, fb2 := slices.Clone(w), slices.Clone(fb)
			ctrlDecayRowGo(w, fb, flags, absent, &k)
			CtrlDecayRow(w2, fb2, flags, absent, &k)
			if !bitsEqual(w, w2) || !bitsEqual(fb, fb2) {
				t.Fatalf("n=%d %+v: kernel differs from the loop", n, k)
			}
		}
	}
}
