package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		if rng.IntN(10) == 0 {
			x[i] = 0
		}
	}
	return x
}

// randRows draws a product kernel's shared operand for n columns and T
// terms: T random rows of b, a row stride and an output row distance ldc
// each n or a little more, and T row offsets drawn with repeats.
func randRows(rng *rand.Rand, n, T int) (ldc int, b []float32, off []int32) {
	ldc = n + rng.IntN(3)
	stride := n + rng.IntN(3)
	b = randVec(rng, T*stride)
	off = make([]int32, T)
	for i := range off {
		off[i] = int32(rng.IntN(T) * stride)
	}
	return ldc, b, off
}

// TestAccRows4MatchesRows checks the four-row kernel (AVX-512, FMA or
// portable, whichever the CPU selects) against a row-by-row loop of fma32,
// bit for bit.
func TestAccRows4MatchesRows(t *testing.T) {
	t.Parallel()
	rng := newRNG(9)
	for _, n := range []int{1, 8, 15, 16, 17, 24, 40, 130} {
		for _, T := range []int{1, 3, 50} {
			ldc, b, off := randRows(rng, n, T)
			v4 := randVec(rng, 4*T)
			c0 := randVec(rng, 3*ldc+n)
			got := slices.Clone(c0)
			AccRows4(got, ldc, v4, off, b, n)
			for q := range 4 {
				v := make([]float32, T)
				for t := range v {
					v[t] = v4[4*t+q]
				}
				want := slices.Clone(c0[q*ldc : q*ldc+n])
				for t, o := range off {
					for j := range want {
						want[j] = fma32(v[t], b[int(o)+j], want[j])
					}
				}
				for j := range want {
					if math.Float32bits(want[j]) != math.Float32bits(got[q*ldc+j]) {
						t.Fatalf("n=%d T=%d row %d col %d: %g, row kernel %g", n, T, q, j, got[q*ldc+j], want[j])
					}
				}
			}
		}
	}
}

// TestAccRows4GroupsMatchesGroups checks the strip-by-strip product
// against AccRows4 called group by group, bit for bit, at widths around
// the strip and the kernels' blocks, and that it leaves the entries
// between the groups' rows alone.
func TestAccRows4GroupsMatchesGroups(t *testing.T) {
	t.Parallel()
	rng := newRNG(10)
	for _, n := range []int{1, 17, 63, 64, 65, 130, 512} {
		for _, groups := range []int{1, 3} {
			T := 1 + rng.IntN(40)
			ldc, b, off := randRows(rng, n, T)
			v4 := randVec(rng, 4*T*groups)
			c0 := randVec(rng, 4*groups*ldc)
			want := slices.Clone(c0)
			for g := range groups {
				AccRows4(want[4*g*ldc:], ldc, v4[4*T*g:4*T*(g+1)], off, b, n)
			}
			got := slices.Clone(c0)
			AccRows4Groups(got, ldc, groups, v4, off, b, n)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d groups=%d T=%d: c[%d] = %g, group by group %g", n, groups, T, i, got[i], want[i])
				}
			}
		}
	}
}

// TestReluGateMatchGo checks the rectifier and the gradient gate (vector
// kernels where the CPU has them) against their loops bit for bit, on
// values with both zeros, infinities and NaN payloads, at lengths around
// the kernels' 8 lanes.
func TestReluGateMatchGo(t *testing.T) {
	t.Parallel()
	rng := newRNG(12)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc0_1234), math.Float32frombits(0xffc0_0001), 1e-40, -1e-40}
	fill := func(n int) []float32 {
		x := randVec(rng, n)
		for i := range x {
			if rng.IntN(3) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		return x
	}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 256, 515} {
		z := fill(n)
		want := slices.Clone(z)
		reluGo(want)
		got := slices.Clone(z)
		Relu(got)
		c, a := fill(n), fill(n+3)
		wantC := slices.Clone(c)
		gateGo(wantC, a)
		gotC := slices.Clone(c)
		Gate(gotC, a)
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("Relu n=%d: z[%d] = %#x from %#x, loop %#x", n, i, math.Float32bits(got[i]), math.Float32bits(z[i]), math.Float32bits(want[i]))
			}
			if math.Float32bits(gotC[i]) != math.Float32bits(wantC[i]) {
				t.Fatalf("Gate n=%d: c[%d] = %#x (a %g), loop %#x", n, i, math.Float32bits(gotC[i]), a[i], math.Float32bits(wantC[i]))
			}
			if z[i] <= 0 && math.Float32bits(want[i]) != 0 || !(z[i] <= 0) && math.Float32bits(want[i]) != math.Float32bits(z[i]) {
				t.Fatalf("Relu n=%d: %#x from %#x, want +0 or the value", n, math.Float32bits(want[i]), math.Float32bits(z[i]))
			}
		}
	}
}

// TestAdamMatchesGo checks the dispatched Adam kernels, masked and not,
// against the portable loop bit for bit, and that both leave the whole
// gradient zero.
func TestAdamMatchesGo(t *testing.T) {
	t.Parallel()
	rng := newRNG(2)
	for step := 1; step <= 3; step++ {
		// Adam's scalars at step t, as core/backprop's Adam.coef sets them.
		bc1, bc2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
		k := AdamStepCoef{WD: 1e-3, B1: 0.9, OB1: 1 - 0.9, B2: 0.999, OB2: 1 - 0.999,
			InvSqrtBC2: float32(1 / math.Sqrt(bc2)), Eps: 1e-8, Step: float32(1e-3 / bc1)}
		for _, n := range []int{1, 8, 13, 29, 64, 517} {
			for _, masked := range []bool{false, true} {
				p, g := randVec(rng, n), randVec(rng, n)
				m, v := randVec(rng, n), randVec(rng, n)
				for i := range v {
					v[i] *= v[i]
				}
				var mask []uint32
				if masked {
					mask = make([]uint32, n)
					for i := range mask {
						if rng.IntN(2) == 0 {
							mask[i] = ^uint32(0)
						}
					}
				}
				if n > 8 {
					// Values at the edge of the normal range, to exercise
					// the flush to zero.
					p[1], m[2], v[3], g[4] = 1.5e-30, -1.3e-30, 1e-30, 0
					p[4], m[4], g[5], g[6] = 3e-31, 2e-30, 1e-17, -3e-17
				}
				ps, gs, ms, vs := slices.Clone(p), slices.Clone(g), slices.Clone(m), slices.Clone(v)
				adamStepGo(ps, gs, ms, vs, mask, &k)
				AdamStep(p, g, m, v, mask, &k)
				for i := range p {
					if g[i] != 0 || gs[i] != 0 {
						t.Fatalf("step %d n=%d masked=%v: gradient %d left %g (portable %g), want 0", step, n, masked, i, g[i], gs[i])
					}
					if math.Float32bits(p[i]) != math.Float32bits(ps[i]) || math.Float32bits(m[i]) != math.Float32bits(ms[i]) ||
						math.Float32bits(v[i]) != math.Float32bits(vs[i]) {
						t.Fatalf("step %d n=%d masked=%v: element %d differs: (%g %g %g), portable (%g %g %g)",
							step, n, masked, i, p[i], m[i], v[i], ps[i], ms[i], vs[i])
					}
					if mask == nil || mask[i] != 0 {
						for _, x := range []float32{p[i], m[i], v[i]} {
							if x != 0 && math.Abs(float64(x)) < storeFloor {
								t.Fatalf("step %d n=%d: element %d stored %g below the floor", step, n, i, x)
							}
						}
					}
				}
			}
		}
	}
}

// TestFMA32 checks the emulated fused multiply-add against math.FMA in
// float64 on cases where double rounding would go wrong, and on random
// inputs against the definition (exact product and sum in big precision
// through float64 when exact).
func TestFMA32(t *testing.T) {
	t.Parallel()
	cases := []struct{ a, b, c, want float32 }{
		{2, 3, 4, 10},
		{1, 1, 0, 1},
		{0, 5, -0, 0},
		// a*b = 1 + 2^-24 + 2^-48 rounds up to 1+2^-23 only if the 2^-48
		// term is kept: (1+2^-24)^2 = 1 + 2^-23 + 2^-48.
		{1 + 0x1p-24*2, 1, 0, 1 + 0x1p-23},
	}
	for _, tc := range cases {
		if got := fma32(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("fma32(%g, %g, %g) = %g, want %g", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
	// Halfway case: x = 1 + 2^-23 (exact float32), x*x = 1 + 2^-22 + 2^-46.
	// Adding c = -2^-24... picks a sum whose float64 rounding lands exactly
	// on a float32 tie, so naive float32(float64 sum) rounds the wrong way.
	x := float32(1 + 0x1p-23)
	c := float32(-0x1p-46) * 0 // keep the tie-free path covered
	if got, want := fma32(x, x, c), float32(1+0x1p-22); got != want {
		t.Errorf("fma32(x, x, 0) = %g, want %g", got, want)
	}
	// a*b+c = 1 + 2^-24 + 2^-60: exactly above the float32 tie between 1
	// and 1+2^-23, so the correct result is 1+2^-23; the float64 sum rounds
	// the 2^-60 away and float32 then ties to even (1).
	a := float32(1 + 0x1p-12)
	b := float32(1 + 0x1p-12) // a*b = 1 + 2^-11 + 2^-24
	cc := float32(-0x1p-11)   // a*b+cc = 1 + 2^-24 (a tie), exact
	if got, want := fma32(a, b, cc), float32(1); got != want {
		t.Errorf("exact tie: fma32 = %.10g, want %.10g (ties to even)", got, want)
	}
	rng := newRNG(10)
	for range 100000 {
		a, b, c := float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
		// The float64 FMA is exact here whenever the float64 sum is exact;
		// check only those (most), where single rounding = float32(sum).
		p := float64(a) * float64(b)
		s := p + float64(c)
		if s-p == float64(c) && s-float64(c) == p {
			if got := fma32(a, b, c); got != float32(s) {
				t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, float32(s))
			}
		}
	}
}

func BenchmarkAccRows4(b *testing.B) {
	for _, n := range []int{256, 512} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			rng := newRNG(1)
			T := 784
			w := randVec(rng, T*n)
			v4 := randVec(rng, 4*T)
			off := make([]int32, T)
			for i := range off {
				off[i] = int32(i * n)
			}
			c := make([]float32, 4*n)
			for b.Loop() {
				AccRows4(c, n, v4, off, w, n)
			}
			b.ReportMetric(float64(4*T*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

// TestNonZerosMatchesGo checks the vector NonZeros and Positives against
// their portable loops: the same entries and offsets in the same order, for lengths around
// the 16-lane blocks, strides 1 and wide, and rows with zeros, -0, NaN and
// infinities.
func TestNonZerosMatchesGo(t *testing.T) {
	rng := newRNG(5)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-45}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 256, 784} {
		for _, stride := range []int{1, 10, 512} {
			x := make([]float32, n)
			for i := range x {
				switch r := rng.IntN(4); {
				case r < 2:
					x[i] = 0
				case r == 2:
					x[i] = special[rng.IntN(len(special))]
				default:
					x[i] = float32(rng.NormFloat64())
				}
			}
			if stride == 1 {
				got := Positives(make([]int32, n), x)
				want := positivesGo(make([]int32, n), x, 0, 0)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d: Positives %v, want %v", n, got, want)
				}
			}
			v, o := NonZeros(make([]float32, n), make([]int32, n), x, stride)
			wv, wo := nonZerosGo(make([]float32, n), make([]int32, n), x, stride, 0, 0)
			if len(v) != len(wv) || len(o) != len(wo) {
				t.Fatalf("n=%d stride=%d: %d entries, want %d", n, stride, len(v), len(wv))
			}
			for i := range wv {
				if math.Float32bits(v[i]) != math.Float32bits(wv[i]) || o[i] != wo[i] {
					t.Fatalf("n=%d stride=%d entry %d: (%v, %d), want (%v, %d)", n, stride, i, v[i], o[i], wv[i], wo[i])
				}
			}
		}
	}
}
