package kernels

import "math"

// core/backprop's kernels: the dense product (AccRows4, fused), its Adam
// step (AdamStep) and the list builders in select.go. The vector versions
// are in dense_amd64.s; every path gives identical bits.

// AccRows4 is the dense product kernel: for four rows of c at once (row q
// at c[q*ldc : q*ldc+n]) sharing one offset list, with row q's coefficients
// v4[4*t+q], it sets c = fma(v, b, c) term by term in ascending t: one fused
// multiply-add, rounded once, per term (unlike AddRows's separate
// multiply and add). Sharing the loads of b across rows and fusing make the dense
// products (the input layer's forward pass and weight gradient, most of a
// BP+ER step) several times faster with 512-bit vectors. The portable
// version rounds exactly as the hardware FMA (fma32), so every path gives
// the same bits. It panics if an argument is too short.
func AccRows4(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	if len(v4) < 4*len(off) || len(c) < 3*ldc+n || ldc < n {
		panic("kernels: AccRows4 argument too short")
	}
	if n == 0 || len(off) == 0 {
		return
	}
	accRows4Impl(c, ldc, v4, off, b, n)
}

// stripCols is the column strip width of AccRows4Groups: a strip of the
// shared rows of b (the input layer's 1,024-2,048 weight rows of 64
// floats, or 768 rows of a batch's gradients) is 192-512 KB, so it stays
// in the 1-2 MB L2 cache while every group passes over it, where the whole
// width (2-4 MB) had to come back from L3 for each group of four rows.
const stripCols = 64

// AccRows4Groups is AccRows4 for groups g = 0..groups-1 of four rows of c,
// group g at c[4*g*ldc:] with its own coefficients v4[4*len(off)*g:], all
// sharing off and b: strip by strip of stripCols columns, every group
// within a strip. Every element of c gets the same terms in the same order
// as from AccRows4 group by group, so the same bits; only the order in
// which elements are visited changes. It panics if an argument is too
// short.
func AccRows4Groups(c []float32, ldc, groups int, v4 []float32, off []int32, b []float32, n int) {
	if groups <= 0 || n == 0 || len(off) == 0 {
		return
	}
	T := len(off)
	if len(v4) < 4*T*groups || len(c) < (4*groups-1)*ldc+n || ldc < n {
		panic("kernels: AccRows4Groups argument too short")
	}
	checkDenseRows(off, n, len(b))
	for c0 := 0; c0 < n; c0 += stripCols {
		nc := min(stripCols, n-c0)
		bs := b[c0:]
		for g := range groups {
			accRows4Run(c[4*g*ldc+c0:], ldc, v4[4*T*g:4*T*(g+1)], off, bs, nc)
		}
	}
}

// checkDenseRows panics unless every row [o, o+n) lies within b's length: the
// vector kernels do no bounds checks, and AccRows4Groups checks once for
// all its strips (on every architecture, so a bad row panics the same way).
func checkDenseRows(off []int32, n, lenB int) {
	for _, o := range off {
		if o < 0 || int(o)+n > lenB {
			panic("kernels: kernel row out of range")
		}
	}
}

// accRows4Go does AccRows4's columns [j0, n).
func accRows4Go(c []float32, ldc int, v4 []float32, off []int32, b []float32, n, j0 int) {
	for q := range 4 {
		cq := c[q*ldc+j0 : q*ldc+n]
		for t, o := range off {
			a := v4[4*t+q]
			row := b[int(o)+j0 : int(o)+n]
			for j := range cq {
				cq[j] = fma32(a, row[j], cq[j])
			}
		}
	}
}

// fma32 returns a*b+c rounded once to float32 (round to nearest even), as
// the FMA instructions do. a*b is exact in float64; the sum is rounded to
// float64 with round-to-odd (TwoSum's exact error decides the last bit),
// after which the rounding to float32 is correct (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", IEEE TC 2008: 53 >= 24 + 2 bits suffice).
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	cc := float64(c)
	s := float64(p + cc)
	bb := float64(s - p)
	e := float64(p-float64(s-bb)) + float64(cc-bb)
	if e != 0 && !math.IsInf(s, 0) && !math.IsNaN(e) {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// AdamStepCoef holds one Adam step's scalars, fixed for all elements.
// The vector kernels read the fields at fixed offsets, in this order.
type AdamStepCoef struct {
	WD, B1, OB1, B2, OB2 float32 // decay, beta1, 1-beta1, beta2, 1-beta2
	InvSqrtBC2           float32 // 1/sqrt(1-beta2^t)
	Eps                  float32
	Step                 float32 // lr/(1-beta1^t)
}

// adamStepGo updates p, m, v with gradient g (all the same length):
//
//	g' = g + wd*p
//	m  = b1*m + (1-b1)*g'
//	v  = b2*v + (1-b2)*(g'*g')
//	p  = p - step*(m / (sqrt(v)*invSqrtBC2 + eps))
//
// with g' flushed by flushGrad and the stored p, m, v by flushStore.
// mask, when non-nil, restricts the update to the elements whose mask word
// is non-zero; elsewhere p, m and v are left exactly as they were. g is
// left zero everywhere: the step consumes the gradient, so the next
// Backward accumulates into zeros without a pass of its own to clear them
// (the zeros are stored while g's cache lines are at hand).
func adamStepGo(p, g, m, v []float32, mask []uint32, k *AdamStepCoef) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	if mask != nil {
		mask = mask[:n]
	}
	for i := range p {
		gi := g[i]
		g[i] = 0
		if mask != nil && mask[i] == 0 {
			continue
		}
		gi = flushGrad(gi + float32(k.WD*p[i]))
		mi := float32(k.B1*m[i]) + float32(k.OB1*gi)
		vi := float32(k.B2*v[i]) + float32(k.OB2*float32(gi*gi))
		den := float32(float32(math.Sqrt(float64(vi)))*k.InvSqrtBC2) + k.Eps
		pi := p[i] - float32(k.Step*(mi/den))
		p[i], m[i], v[i] = flushStore(pi), flushStore(mi), flushStore(vi)
	}
}

// AdamStep is adamStepGo's step (below), by the vector kernels where the
// CPU has them: the same float32 operations in the same order, so the
// same bits.
func AdamStep(p, g, m, v []float32, mask []uint32, k *AdamStepCoef) {
	adamStepImpl(p, g, m, v, mask, k)
}

// Adam's flushes to zero. Under the coupled L2 decay a parameter with no
// data gradient (a weight from an always-zero input pixel, a unit that
// never wins its k-WTA competition) shrinks geometrically toward zero, and
// so do its moments; once the arithmetic on them produces subnormal floats
// (below 2^-126), every such operation takes a microcode assist on x86 and
// a local-schedule run slows down tenfold over its stream. So stored
// parameters and moments below 2^-100 (7.9e-31) become 0, and so does a
// decayed gradient below 2^-55 (2.8e-17); with these bounds no operation of
// the update can produce a subnormal from normal inputs (wd*p >= 2^-110,
// (1-beta2)*g^2 >= 2^-120, beta*m >= 2^-101). Values this small carry
// nothing of numerical consequence next to O(1e-2) weights.
const (
	storeFloor = 0x1p-100
	gradFloor  = 0x1p-55
)

// flushStore returns 0 for |x| < storeFloor, x otherwise.
func flushStore(x float32) float32 {
	if x < storeFloor && x > -storeFloor {
		return 0
	}
	return x
}

// flushGrad returns 0 for |x| < gradFloor, x otherwise.
func flushGrad(x float32) float32 {
	if x < gradFloor && x > -gradFloor {
		return 0
	}
	return x
}
